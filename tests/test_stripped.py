"""Notebooks are stored stripped, as `make fix`, the pre-commit hook and CONTRIBUTING.md's
command leave them: `nbstripout --verify` with the hook's arguments (no outputs, counts,
run or Colab metadata; cell ids kept), and the three name the same arguments."""

import json
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from tests.book import NOTEBOOKS, ROOT, cell_name, load_notebook

notebook_params = pytest.mark.parametrize(
    "path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS]
)


def strip_arguments():
    """The nbstripout hook's arguments in .pre-commit-config.yaml (CONTRIBUTING.md's
    command and `make fix` use them)."""
    import yaml

    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    (hook,) = [
        h for repo in config["repos"] for h in repo["hooks"] if h["id"] == "nbstripout"
    ]
    return hook["args"]


def strip_command():
    args = strip_arguments()
    return f'nbstripout --keep-id --extra-keys "{args[args.index("--extra-keys") + 1]}"'


def test_contributing_and_make_fix_strip_as_the_hook_does():
    """CONTRIBUTING.md's strip command and the Makefile's pass the pre-commit hook's
    arguments."""
    assert "--keep-id" in strip_arguments()
    assert strip_command() in (ROOT / "CONTRIBUTING.md").read_text()
    assert strip_command() in (ROOT / "Makefile").read_text().replace("$(BIN)/", "")


def nbstripout(*args):
    found = Path(sys.executable).with_name("nbstripout")
    if not found.exists():
        pytest.skip("nbstripout is not installed (requirements.txt pins it)")
    return subprocess.run(
        [str(found), *strip_arguments(), *args],
        capture_output=True,
        check=False,
        text=True,
        cwd=ROOT,
    )


@cache
def would_strip():
    """The notebooks `nbstripout --verify` (with the hook's arguments) would change."""
    done = nbstripout("--verify", *map(str, NOTEBOOKS))
    return set(re.findall(r"would have stripped (.+)", done.stdout + done.stderr))


def stripped_cells(path):
    """'cell <id>: <keys>' for each cell the strip command would change."""
    done = nbstripout("--textconv", str(path))
    after = {cell.get("id"): cell for cell in json.loads(done.stdout)["cells"]}
    changed = []
    for cell in load_notebook(path)["cells"]:
        other = after.get(cell.get("id"), {})
        keys = sorted(
            key for key in cell.keys() | other.keys() if cell.get(key) != other.get(key)
        )
        keys += [
            f"metadata.{key}"
            for key in sorted(cell.get("metadata", {}))
            if key not in other.get("metadata", {})
        ]
        if keys:
            changed.append(f"{cell_name(cell)}: {', '.join(keys)}")
    return changed


@notebook_params
def test_stored_stripped(path):
    """Stored as the strip command leaves it (`nbstripout --verify` with the hook's
    arguments): no outputs, counts, run or Colab metadata; cell ids kept."""
    if str(path) in would_strip():
        pytest.fail(
            "run `make fix` (or CONTRIBUTING.md's strip command); it strips "
            + ("; ".join(stripped_cells(path)) or "the notebook's metadata")
        )
