"""What the book's tests share: where things are, and how to read the notebooks, toc and
pins."""

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "chapters"
BUILD = ROOT / "_build"
HTML = BUILD / "html"
EXECUTION_CACHE = BUILD / ".jupyter_cache"

NOTEBOOKS = sorted(CHAPTERS.glob("*.ipynb"))


def load_notebook(path):
    return json.loads(Path(path).read_text())


def executed_notebook(path):
    """The notebook at `path` with the outputs the last site build recorded for it.

    Read from the build's execution cache (jupyter-cache), not from
    _build/jupyter_execute/: myst-nb writes that copy with outputs only in a run that
    executed the notebook, and without them in a run that took the outputs from the
    cache.
    """
    import nbformat
    from jupyter_cache import get_cache

    notebook = nbformat.read(path, as_version=4)
    _, merged = get_cache(EXECUTION_CACHE).merge_match_into_notebook(notebook)
    return json.loads(nbformat.writes(merged))


def code_cells(notebook):
    return [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]


def source(cell):
    text = cell["source"]
    return text if isinstance(text, str) else "".join(text)


def cell_name(cell):
    """How a failure names a cell: by its id, which stays when cells move or are added."""
    return f"cell {cell.get('id', '?')}"


def tags(cell):
    return cell.get("metadata", {}).get("tags", [])


def heading(markdown):
    """The text of the first `# ` heading in a Markdown text, or None."""
    match = re.search(r"^# (.+)$", markdown, re.MULTILINE)
    return match.group(1).strip() if match else None


def setup_cell(notebook):
    """The first code cell a reader sees (hidden `remove-cell` cells such as %xmode come
    before)."""
    return next(c for c in code_cells(notebook) if "remove-cell" not in tags(c))


def title(notebook):
    """The `# ` heading of the first markdown cell."""
    first = next(cell for cell in notebook["cells"] if cell["cell_type"] == "markdown")
    return heading(source(first))


def config():
    import yaml  # here, not at the top: the newest-JAX leg (.venv-newest) imports this module without PyYAML

    return yaml.safe_load((ROOT / "_config.yml").read_text())


def toc_files():
    """Every `file:` in _toc.yml, in reading order, the root first."""
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                files.append(node["file"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(toc.get("parts", toc.get("chapters", [])))
    return files


def requirement_pins(file="requirements.txt"):
    """{normalized name: version} from a requirements file (relative to ROOT).

    Every line must be an exact `name==version` pin or a `-r other.txt` include, whose
    pins are read the same way (a name pinned twice must have one version).
    """
    pins = {}
    path = ROOT / file
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        if line.startswith(("-r ", "--requirement ")):
            included = (path.parent / line.split(None, 1)[1].strip()).relative_to(ROOT)
            for name, version in requirement_pins(included.as_posix()).items():
                assert pins.setdefault(name, version) == version, (
                    f"{file}: {name} pinned twice"
                )
            continue
        name, sep, version = line.partition("==")
        assert sep, f"{file}: {line!r} is not pinned with =="
        name = normalize(name)
        assert pins.setdefault(name, version.strip()) == version.strip(), (
            f"{file}: {name} pinned twice"
        )
    return pins


def normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower().strip()


def repository_slug():
    """'org/repo' from _config.yml's repository url."""
    url = config()["repository"]["url"].rstrip("/")
    return "/".join(url.split("/")[-2:])
