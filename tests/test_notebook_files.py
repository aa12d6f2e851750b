"""Static checks on the chapter sources: the table of contents, storage, metadata, setup
cell, API."""

import itertools
import re

import pytest

from tests.book import (
    CHAPTERS,
    NOTEBOOKS,
    ROOT,
    cell_name,
    code_cells,
    load_notebook,
    normalize,
    repository_slug,
    requirement_pins,
    setup_cell,
    source,
    tags,
    title,
    toc_files,
)

notebook_params = pytest.mark.parametrize(
    "path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS]
)

# Names removed from JAX (or never to be used), matched in code cells only.
REMOVED_API = [
    r"\bjax\.tree_(map|leaves|flatten|unflatten|structure|transpose|multimap|reduce|all)\b",
    r"\bjax\.ops\.index_\w+",
    r"\bjax\.lib\.xla_bridge\b",
    r"\bjax\.tools\.colab_tpu\b",
    r"\bDeviceArray\b",
    r"\bjax\.experimental\.maps\b",
    r"^\s*import\s+jax\.numpy\s+as\s+np\b",
]
# Packages a Colab runtime lacks; a chapter importing one must install it in its setup cell.
COLAB_LACKS = {"distrax", "chex", "tfp-nightly", "equinox", "grain"}
COLAB_GUARD = 'if "google.colab" in sys.modules:'


def test_there_are_chapters():
    assert NOTEBOOKS, "no notebooks under chapters/"


def test_toc_and_chapters_agree():
    listed = toc_files()
    assert len(listed) == len(set(listed)), f"_toc.yml lists a file twice: {listed}"
    for entry in listed:
        candidates = [ROOT / f"{entry}{suffix}" for suffix in (".ipynb", ".md")]
        assert any(c.exists() for c in candidates), (
            f"_toc.yml lists {entry}, which does not exist"
        )
    pages = sorted(CHAPTERS.glob("*.ipynb")) + sorted(CHAPTERS.glob("*.md"))
    for page in pages:
        entry = page.relative_to(ROOT).with_suffix("").as_posix()
        assert entry in listed, f"{page.name} is not in _toc.yml"


def test_numbered_chapters_are_in_reading_order():
    numbered = [f for f in toc_files() if re.match(r"chapters/\d\d_", f)]
    assert numbered == sorted(numbered)


@notebook_params
def test_metadata(path):
    meta = load_notebook(path)["metadata"]
    assert meta["kernelspec"]["name"] == "python3"
    assert meta.get("accelerator") in {"GPU", "TPU"}, (
        "Colab metadata must ask for a GPU or TPU"
    )
    assert meta.get("colab", {}).get("gpuType"), (
        "Colab metadata must name the accelerator type"
    )


@notebook_params
def test_title_comes_first(path):
    assert title(load_notebook(path)), "the first markdown cell must hold the `# Title`"


@notebook_params
def test_opens_with_setup_cell(path):
    notebook = load_notebook(path)
    setup = source(setup_cell(notebook))
    assert "import jax" in setup
    assert "jax.default_backend()" in setup and "jax.devices()" in setup, (
        "the setup cell prints the backend and devices"
    )
    for cell in code_cells(notebook):
        if cell is not setup_cell(notebook):
            assert "pip install" not in source(cell), (
                "only the setup cell installs packages"
            )


def colab_installs(setup):
    """The package specs installed under the Colab guard, or [] when there is no
    install."""
    lines = setup.splitlines()
    installs = []
    for index, line in enumerate(lines):
        if "pip install" not in line:
            continue
        assert (
            index > 0
            and lines[index - 1].strip().startswith(COLAB_GUARD)
            and line.startswith(" ")
        ), f"`{line.strip()}` must sit directly under `{COLAB_GUARD}`"
        installs += [
            word
            for word in line.split("pip install", 1)[1].split()
            if not word.startswith("-")
        ]
    return installs


@notebook_params
def test_colab_installs_only_what_it_lacks_with_the_book_pins(path):
    notebook = load_notebook(path)
    installs = colab_installs(source(setup_cell(notebook)))
    pins = requirement_pins()
    installed = set()
    for spec in installs:
        name, sep, version = spec.partition("==")
        name = normalize(name)
        assert name not in {"jax", "jaxlib"}, (
            "never install jax or jaxlib: Colab's match its runtime"
        )
        assert sep, f"{spec} is not pinned"
        assert pins.get(name) == version, (
            f"{spec} differs from requirements.txt ({pins.get(name)})"
        )
        installed.add(name)
    code = "\n".join(source(c) for c in code_cells(notebook))
    imported = {
        normalize(m)
        for m in re.findall(r"^\s*(?:import|from)\s+(\w+)", code, re.MULTILINE)
    }
    needed = {"distrax", "chex", "tfp-nightly"} if "distrax" in imported else set()
    needed |= imported & COLAB_LACKS
    assert needed <= installed, (
        f"the Colab setup must install {sorted(needed - installed)}"
    )
    assert installed <= COLAB_LACKS, (
        f"Colab already has {sorted(installed - COLAB_LACKS)}"
    )


@notebook_params
def test_no_removed_api_in_code(path):
    for cell in code_cells(load_notebook(path)):
        for pattern in REMOVED_API:
            match = re.search(pattern, source(cell), re.MULTILINE)
            assert not match, (
                f"{cell_name(cell)} uses removed or banned API: {match.group(0)}"
            )


@notebook_params
def test_repository_urls_match_config(path):
    """A fork changes the repository in _config.yml; the notebooks must not disagree
    with it."""
    slug = repository_slug()
    for cell in code_cells(load_notebook(path)):
        for found in re.findall(
            r"(?:github\.com|githubusercontent\.com)/([\w.-]+/[\w.-]+)", source(cell)
        ):
            assert found == slug, f"{found} is not the book's repository {slug}"
        for found in re.findall(
            r"(?:BOOK_REPOSITORY|repository)\s*=\s*[\"']([^\"']+)", source(cell)
        ):
            assert found == slug, (
                f"BOOK_REPOSITORY={found} is not the book's repository {slug}"
            )


@notebook_params
def test_raises_exception_cells_are_not_wrapped(path):
    """A deliberate error is raised for the reader to see, never hidden behind
    try/except."""
    for cell in code_cells(load_notebook(path)):
        if "raises-exception" in tags(cell):
            assert not re.search(r"^\s*try\s*:", source(cell), re.MULTILINE), cell_name(
                cell
            )


numbered = [p for p in NOTEBOOKS if re.match(r"\d\d_", p.name)]


@pytest.mark.parametrize("path", numbered, ids=[p.name for p in numbered])
def test_chapter_shape(path):
    notebook = load_notebook(path)
    markdown = "\n".join(
        source(c) for c in notebook["cells"] if c["cell_type"] == "markdown"
    )
    code = "\n".join(source(c) for c in code_cells(notebook))
    exercises = re.findall(r"```\{exercise\}", markdown)
    solutions = re.findall(r"```\{solution-start\}[^\n]*\n:class: dropdown", markdown)
    assert len(exercises) >= 2, "a chapter has at least two exercises"
    assert len(solutions) >= len(exercises), "every exercise has a folded solution"
    assert re.search(r"^## Summary", markdown, re.MULTILINE), (
        "a chapter ends with ## Summary"
    )
    assert "assert" in code


def test_each_notebook_ends_with_a_link_to_the_next_page():
    listed = toc_files()
    for entry, following in itertools.pairwise(listed):
        path = ROOT / f"{entry}.ipynb"
        if not path.exists():
            continue
        notebook = load_notebook(path)
        last = [c for c in notebook["cells"] if c["cell_type"] == "markdown"][-1]
        last_line = source(last).strip().splitlines()[-1]
        target = following.split("/")[-1]
        assert last_line.startswith("Next:") and f"]({target}." in last_line, (
            f"{path.name} should end with 'Next: [...]({target}...)', not {last_line!r}"
        )


IMAGE_FILE = re.compile(r"\S*\.(png|svg|jpe?g|gif|webp|pdf)", re.IGNORECASE)


@notebook_params
def test_figure_alt_text_is_not_a_file_name(path):
    """A figure's alt text (a code cell's metadata mystnb.image.alt, a Markdown image's
    ![alt](...) or :alt:) says what it shows, not which file it is."""
    for cell in load_notebook(path)["cells"]:
        image = cell.get("metadata", {}).get("mystnb", {}).get("image", {})
        alts = [image.get("alt", "")] if isinstance(image, dict) else []
        if cell["cell_type"] == "markdown":
            alts += re.findall(r"!\[([^\]]*)\]\(", source(cell))
            alts += re.findall(r"^:alt:(.*)$", source(cell), re.MULTILINE)
        for alt in alts:
            assert not IMAGE_FILE.fullmatch(alt.strip()), (
                f"{cell_name(cell)}: alt text {alt!r}"
            )
