"""The site's sources, read without executing anything (`make check`).

- Sphinx reads every page and resolves every reference with execution off, warnings as
  errors and nitpicky references (`jupyter-book build -W -n --keep-going` with
  _config.yml's `execute_notebooks` set to `off` and Sphinx's `dummy` builder, which
  resolves the references and writes nothing), into _build/check/, away from the real
  build's cache: a broken `{ref}`, role, directive or toctree fails in seconds, not at
  the end of `make test`.
- Every link to a heading or label resolves: `[text](page.ipynb#anchor)` (or `.md`, or
  `#anchor` on the same page) to a heading's slug of that page (levels 1 to
  `myst_heading_anchors`, as MyST computes it) or a `(label)=` there, and `{ref}` to a
  label anywhere in the book (`(label)=`, `:name:`, `:label:`).
"""

import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import yaml

from tests.book import (
    BUILD,
    ROOT,
    cell_name,
    config,
    load_notebook,
    source,
    toc_files,
)

JUPYTER_BOOK = Path(sys.executable).with_name("jupyter-book")
CHECK_BUILD = BUILD / "check"
# Directives whose body is not Markdown (their links and labels are not the page's)
NOT_MARKDOWN = {"code-cell", "code-block", "code", "math", "raw", "mermaid"}


def check_config():
    """_config.yml with execution off (local extensions made absolute: the copy lives in
    _build/check/)."""
    settings = config()
    settings["execute"]["execute_notebooks"] = "off"
    extensions = settings["sphinx"].get("local_extensions", {})
    for name, folder in extensions.items():
        extensions[name] = str(ROOT / folder)
    CHECK_BUILD.mkdir(parents=True, exist_ok=True)
    path = CHECK_BUILD / "_config.yml"
    path.write_text(yaml.safe_dump(settings, sort_keys=False))
    return path


def name_cells(line):
    """A warning's place in a notebook, `page.ipynb:960002:` (myst-nb writes the cell's
    index plus one, times 10000, plus a line), as `page.ipynb, cell <id>:`."""
    match = re.match(r"(.+\.ipynb):(\d+):", line)
    if not match or not Path(match.group(1)).exists():
        return line
    cells = load_notebook(match.group(1))["cells"]
    index = int(match.group(2)) // 10000 - 1
    if not 0 <= index < len(cells):
        return line
    place = f"{Path(match.group(1)).relative_to(ROOT)}, {cell_name(cells[index])}:"
    return place + line[match.end() :]


def test_sources_build_without_warnings():
    """Every page read and every reference resolved, nothing executed: no warning."""
    command = [
        str(JUPYTER_BOOK),
        "build",
        str(ROOT),
        "--config",
        str(check_config()),
        "--path-output",
        str(CHECK_BUILD),
        "--all",
        "-W",
        "-n",
        "--keep-going",
        "--builder",
        "custom",
        "--custom-builder",
        "dummy",
    ]
    done = subprocess.run(
        command,
        capture_output=True,
        check=False,
        text=True,
        cwd=ROOT,
        env={**os.environ, "NO_COLOR": "1"},
    )
    log = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)
    (CHECK_BUILD / "build.log").write_text(log)
    warnings = [
        name_cells(line)
        for line in log.splitlines()
        if "WARNING:" in line or "ERROR:" in line
    ]
    assert done.returncode == 0 and not warnings, (
        "the sources do not build cleanly (log in _build/check/build.log):\n"
        + ("\n".join(warnings) or log[-4000:])
    )


# ---------------------------------------------------------------------------------------
# Anchors and labels, read statically


@cache
def markdown_parser():
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    extensions = config()["parse"]["myst_enable_extensions"]
    return create_md_parser(
        MdParserConfig(enable_extensions=set(extensions)), RendererHTML
    )


def heading_levels():
    return config()["sphinx"]["config"].get("myst_heading_anchors", 0)


class Page:
    """A page's headings' slugs, its labels, and the links and refs it makes."""

    def __init__(self, path):
        self.path = path
        self.slugs, self.labels, self.links, self.refs = set(), set(), [], []
        for where, markdown in self.markdown_cells():
            tokens = markdown_parser().parse(markdown)
            self.read_headings(tokens)
            self.read(tokens, where)

    def markdown_cells(self):
        """[(where, markdown)]: the page, or each markdown cell of a notebook."""
        if self.path.suffix == ".md":
            return [(self.path.name, self.path.read_text())]
        return [
            (f"{self.path.name}, {cell_name(cell)}", source(cell))
            for cell in load_notebook(self.path)["cells"]
            if cell["cell_type"] == "markdown"
        ]

    def read_headings(self, tokens):
        """The slug of each heading up to myst_heading_anchors, as MyST computes it."""
        from myst_parser.mdit_to_docutils.base import default_slugify

        for index, token in enumerate(tokens):
            if token.type == "heading_open" and int(token.tag[1]) <= heading_levels():
                title = "".join(
                    child.content
                    for child in tokens[index + 1].children or []
                    if child.type in ("text", "code_inline")
                )
                slug = unique = default_slugify(title)
                n = 0
                while unique in self.slugs:
                    n += 1
                    unique = f"{slug}-{n}"
                self.slugs.add(unique)

    def read(self, tokens, where):
        for token in tokens:
            if token.type == "myst_target":
                self.labels.add(token.content.strip())
            elif token.type in ("fence", "colon_fence") and token.info.startswith("{"):
                directive = token.info.strip()[1:].split("}")[0]
                if directive in NOT_MARKDOWN:
                    continue
                body = []
                for line in token.content.splitlines():
                    if line.startswith((":name:", ":label:")):
                        self.labels.add(line.split(":", 2)[2].strip())
                    elif not (
                        line.startswith(":") and line.count(":") >= 2 and not body
                    ):
                        body.append(line)
                self.read(markdown_parser().parse("\n".join(body)), where)
            for child in token.children or []:
                if child.type == "link_open":
                    self.links.append((where, child.attrs["href"]))
                elif child.type == "myst_role" and child.meta.get("name") == "ref":
                    text = child.content.strip()
                    label = text.rsplit("<", 1)[1].rstrip(">") if "<" in text else text
                    self.refs.append((where, label.strip()))


def pages():
    found = []
    for entry in toc_files():
        for suffix in (".ipynb", ".md"):
            if (ROOT / f"{entry}{suffix}").exists():
                found.append(ROOT / f"{entry}{suffix}")
    return found


@cache
def read_pages():
    return {path: Page(path) for path in pages()}


def broken_anchors(page, known):
    """The links of `page` to a heading or label that its target page lacks."""
    broken = []
    for where, href in page.links:
        target, sep, anchor = href.partition("#")
        if not sep or "://" in target or not anchor:
            continue
        if target and not target.endswith((".ipynb", ".md")):
            continue
        path = (page.path.parent / target).resolve() if target else page.path
        other = known.get(path)
        if other is None:
            broken.append(f"{where}: {href} (no such page in the book)")
        elif anchor not in other.slugs | other.labels:
            broken.append(f"{where}: {href} (no heading or label {anchor!r} there)")
    return broken


def broken_refs(page, known):
    labels = {label for other in known.values() for label in other.labels}
    return [
        f"{where}: {{ref}}`{label}` (no such label in the book)"
        for where, label in page.refs
        if label not in labels
    ]


def test_links_to_headings_and_labels_resolve():
    """Every page's links to a heading or label, read in one test (one parse of the
    book)."""
    known = read_pages()
    broken = [
        problem
        for page in known.values()
        for problem in broken_anchors(page, known) + broken_refs(page, known)
    ]
    assert not broken, "links to nothing:\n" + "\n".join(broken)


def test_the_anchor_check_finds_a_broken_link():
    known = read_pages()
    some = next(p for p in known.values() if p.path.suffix == ".ipynb" and p.slugs)
    first = min(some.slugs)
    probe = Page.__new__(Page)
    probe.path = ROOT / "intro.md"
    probe.links = [
        ("probe", f"chapters/{some.path.name}#{first}"),
        ("probe", f"chapters/{some.path.name}#{first}-no-such-heading"),
        ("probe", "chapters/" + "no_such_page.ipynb#x"),
    ]
    probe.refs = [("probe", "no-such-label-anywhere")]
    assert len(broken_anchors(probe, known)) == 2
    assert len(broken_refs(probe, known)) == 1
