"""The prose teaches; it does not narrate its checks, and rounding stays in its appendix.

Two counts over the markdown a reader sees (every notebook's markdown cells, the book's
.md pages and the landing page), with inline code, math and fenced blocks removed first:

- NARRATION: sentences that point the reader at the book's own checks ("the folded cell
  checks ...", "the check below", "asserts that ..."). The landing page says once what
  folded cells are; the whole book may hold at most MAX_NARRATION such sentences. An
  exercise that asks the reader to assert something sets a task and is not counted.
- ROUNDING: sentences about rounding, tolerances and error bounds. They belong in the
  numerics appendix (not counted) and in the folded checks; everywhere else together at
  most MAX_ROUNDING. The phrase the book uses to send a reader to the appendix, "equal up
  to float32 rounding" (any dtype), is the sanctioned form and is not counted on its own.

A failure lists every counted sentence with its page, so the fix starts from the list.
`pytest tests/test_prose.py -rA` prints the per-page counts when it passes too.
"""

import re

from tests.book import CHAPTERS, NOTEBOOKS, ROOT, load_notebook, source

MAX_NARRATION = 15
MAX_ROUNDING = 20
# Where rounding is the lesson: not counted.
ROUNDING_HOME = {"appendix_numerics.ipynb"}

NARRATION = re.compile(
    r"\bfolded (?:cell|check|code)|\b(?:hidden|check|folded) cells?\b"
    r"|\bthe checks?\b (?:below|above|that|here|after|next)"
    r"|\b(?:checks?|checked) (?:below|above|quietly|in the fold)"
    r"|\bcell (?:below|above|after it) checks\b"
    r"|\bassert(?:s|ed|ion|ions)?\b",
    re.IGNORECASE,
)
ROUNDING = re.compile(
    r"\brounding\b|\brounded\b|\brounds? (?:to|off|its|the|each|a)\b|\bround-?off\b"
    r"|\btolerances?\b|\bulps?\b|\bmachine epsilon\b|\brtol\b|\batol\b"
    r"|\berror bounds?\b",
    re.IGNORECASE,
)
# "equal up to float32 rounding", "agree up to bfloat16 rounding": the one sanctioned form.
SANCTIONED = re.compile(
    r"\bup to (?:the )?(?:float32|float64|float16|bfloat16|TF32|float)"
    r"(?: or \w+)? rounding\b",
    re.IGNORECASE,
)


def pages():
    """{page name: its reader-visible markdown}."""
    found = {}
    for path in NOTEBOOKS:
        cells = load_notebook(path)["cells"]
        found[path.name] = "\n\n".join(
            source(c) for c in cells if c["cell_type"] == "markdown"
        )
    for path in [*sorted(CHAPTERS.glob("*.md")), ROOT / "intro.md"]:
        found[path.name] = path.read_text()
    return found


def without_code_blocks(markdown, skip=()):
    """The markdown less its fenced code blocks (```python, ```text, ...); the fences of a
    directive (```{note}, ````{exercise}) go, the prose inside them stays, except inside
    the directives named in `skip`."""
    kept, open_fences = [], []  # each open fence: (its backticks or tildes, is skipped)
    for line in markdown.split("\n"):
        fence = re.match(r"\s*(`{3,}|~{3,})\s*(.*)$", line)
        if fence:
            marks, info = fence.groups()
            top = open_fences[-1][0] if open_fences else None
            closes = top and not info.strip() and marks[0] == top[0]
            if closes and len(marks) >= len(top):
                open_fences.pop()
            elif not (open_fences and open_fences[-1][1]):
                directive = re.match(r"\{([\w-]+)\}", info)
                skipped = not directive or directive.group(1) in skip
                open_fences.append((marks, skipped))
            continue
        if not (open_fences and open_fences[-1][1]):
            kept.append(line)
    return "\n".join(kept)


def sentences(markdown, skip=()):
    text = without_code_blocks(markdown, skip)
    text = re.sub(r"\$\$.*?\$\$|\$[^$\n]+\$|`[^`\n]+`", " X ", text, flags=re.DOTALL)
    text = re.sub(r"\]\([^)]*\)", "]", text)  # link targets
    parts = re.split(r"(?<=[.!?:])\s+(?=[A-Z(*])|\n\s*\n|\n\s*[-*] |\n#+ ", text)
    return [" ".join(p.split()) for p in parts if p.strip()]


def counted(pattern, skip=(), exempt=None, skip_directives=()):
    hits = {}
    for page, markdown in pages().items():
        if page in skip:
            continue
        for sentence in sentences(markdown, skip_directives):
            rest = exempt.sub(" ", sentence) if exempt else sentence
            if pattern.search(rest):
                hits.setdefault(page, []).append(sentence)
    return hits


def report(hits):
    lines = []
    for page, found in sorted(hits.items()):
        lines.append(f"{page}: {len(found)}")
        lines += [f"    {s[:160]}" for s in found]
    return "\n".join(lines)


def test_prose_does_not_narrate_its_checks():
    hits = counted(NARRATION, skip_directives=("exercise",))
    total = sum(map(len, hits.values()))
    print(report(hits))
    assert total <= MAX_NARRATION, (
        f"{total} sentences point at the book's checks (at most {MAX_NARRATION}):\n"
        + report(hits)
    )


def test_rounding_stays_in_the_numerics_appendix():
    hits = counted(ROUNDING, skip=ROUNDING_HOME, exempt=SANCTIONED)
    total = sum(map(len, hits.values()))
    print(report(hits))
    assert total <= MAX_ROUNDING, (
        f"{total} sentences on rounding and tolerances outside the numerics appendix "
        f"(at most {MAX_ROUNDING}):\n" + report(hits)
    )


def test_the_counters_find_what_they_count():
    """The patterns catch the sentences they are meant for and pass plain teaching."""
    narrating = "The folded cell below checks it. The check below asserts the shape."
    teaching = "The gradient has the shape of the parameters. Rounding errors add up."
    assert len([s for s in sentences(narrating) if NARRATION.search(s)]) == 2
    assert not any(NARRATION.search(s) for s in sentences(teaching))
    assert [ROUNDING.search(s) is not None for s in sentences(teaching)] == [
        False,
        True,
    ]
    fenced = "Prose.\n```{note}\nKept.\n```\n```python\nassert x\n```\nAfter."
    assert without_code_blocks(fenced).split() == ["Prose.", "Kept.", "After."]
    task = "Intro.\n````{exercise} Title\nAssert it.\n````\nOutro."
    assert without_code_blocks(task, skip=("exercise",)).split() == ["Intro.", "Outro."]
    sanctioned = "The two agree up to float32 rounding."
    assert not ROUNDING.search(SANCTIONED.sub(" ", sanctioned))
    assert ROUNDING.search("The tolerance is 1e-5.")
