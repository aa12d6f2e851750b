"""Every file path that the repository's own docs and comments name exists.

Scanned: the tracked text files (Markdown, Python, YAML, TOML, requirements, the
Makefile, .ci/run, the site's templates and scripts, and the notebooks' cells). A path
with a folder (`tests/book.py`, `../_build/x`, `data/oaks/counts.csv`) must exist
relative to the repository, the file's folder or chapters/ (where the notebooks run); a
bare file name (`requirements-newest.txt`) must be the name of a file in the repository,
unless it is one that the build or the tests write (GENERATED); an environment
(`.venv...`) must be one that the Makefile creates; and no path points outside the
repository into this machine (`/work/...`, `/home/...`). URLs are not paths.
"""

import re
import subprocess

import pytest

from tests.book import CHAPTERS, ROOT, load_notebook, source

TEXT_SUFFIXES = {
    ".md",
    ".py",
    ".yml",
    ".yaml",
    ".toml",
    ".txt",
    ".js",
    ".css",
    ".html",
    ".ipynb",
}
TEXT_NAMES = {"Makefile", "run", ".gitignore"}
EXTENSIONS = r"(?:py|ipynb|md|txt|ya?ml|toml|json|js|css|csv|bib|cfg)"
WITH_FOLDER = re.compile(
    rf"(?<![\w/.@~$-])((?:\.{{1,2}}/)*(?:[\w.-]+/)+[\w.-]+\.{EXTENSIONS})(?![\w/])"
)
# Bare names of the repository's own kinds of files (a notebook may name scripts it
# writes).
BARE = re.compile(
    r"(?<![\w/.@~$-])(requirements[\w-]*\.txt|test_\w+\.py|\d\d_\w+\.ipynb|appendix_\w+\.ipynb"
    r"|[A-Z]+\.md|[\w-]+\.toml|\.pre-commit-config\.yaml|_(?:config|toc)\.yml)(?![\w/.])"
)
VENV = re.compile(r"(?<![\w-])(\.venv[\w-]*)")
OUTSIDE = re.compile(r"(?<![\w.:/-])(/(?:work|home|root|Users)/\w\S*)")
URL = re.compile(r"[a-z][\w+.-]*://\S+|\b[\w.-]+\.(?:com|org|io|dev)/\S*")
# Files that the build, the tests, a chapter or a tool writes, or that live elsewhere:
# named in the docs, but not in the repository.
GENERATED = {
    "axe.min.js",  # npm ci --prefix tests installs it under tests/node_modules/
}
# Paths in the built site (the pages, MathJax's copy) and other outputs under _build/.
BUILT = ("_build/", "mathjax/")
# Examples in the docs: chapters/NN_name.ipynb, <file>, *.ipynb.
PLACEHOLDER = re.compile(r"NN|[<>*{}]")
# Environments the Makefile creates.
VENVS = set(
    re.findall(
        r"^VENV\w*\s*:=\s*(\.venv[\w-]*)", (ROOT / "Makefile").read_text(), re.MULTILINE
    )
)


def tracked_files():
    done = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if done.returncode:
        pytest.skip("not a git checkout")
    return [ROOT / name for name in done.stdout.split("\0") if name]


FILES = [
    path
    for path in tracked_files()
    if path.exists()
    and (path.suffix in TEXT_SUFFIXES or path.name in TEXT_NAMES)
    and "node_modules" not in path.parts
]
NAMES = {path.name for path in tracked_files()} | {p.name for p in ROOT.glob("*")}


def text_of(path):
    if path.suffix == ".ipynb":
        return "\n".join(source(cell) for cell in load_notebook(path)["cells"])
    return path.read_text()


def missing_paths(path, text):
    text = URL.sub(" ", text)
    missing = []
    for found in WITH_FOLDER.findall(text):
        bases = (ROOT, path.parent, CHAPTERS)
        if PLACEHOLDER.search(found) or any((base / found).exists() for base in bases):
            continue
        if found.split("/")[-1] in GENERATED or found.lstrip("./").startswith(BUILT):
            continue
        missing.append(found)
    for found in BARE.findall(text):
        if found not in NAMES and found not in GENERATED:
            missing.append(found)
    for found in VENV.findall(text):
        if found not in VENVS:
            missing.append(f"{found} (not an environment the Makefile creates)")
    missing += [f"{found} (outside the repository)" for found in OUTSIDE.findall(text)]
    return missing


@pytest.mark.parametrize(
    "path", FILES, ids=[p.relative_to(ROOT).as_posix() for p in FILES]
)
def test_named_paths_exist(path):
    missing = missing_paths(path, text_of(path))
    assert not missing, "names paths that do not exist: " + ", ".join(
        sorted(set(missing))
    )


def test_the_check_finds_a_missing_path():
    # Built from pieces, so that this file does not name them itself.
    dead = [
        "tests/test_" + "pins.py",
        "requirements-" + "py312.txt",
        "../.venv" + "312/bin",
    ]
    assert len(missing_paths(ROOT / "README.md", " and ".join(dead))) == 3
