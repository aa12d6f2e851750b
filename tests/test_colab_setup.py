"""Each chapter's setup cell, run the way Colab runs it.

A Colab runtime has Python 3.12, its own JAX, numpy, optax and matplotlib, and
TensorFlow Probability's stable release, but not distrax or TFP's nightly build;
`google.colab` is imported when the kernel starts. A setup cell then sees
`"google.colab" in sys.modules` and runs its `%pip install` for real, over those
packages. This test rebuilds that situation:

- a Colab-like environment under _build/colab-newest/base: a copy of .venv-newest (hard
  links, so it costs no disk and .venv-newest itself is never changed: pip replaces
  files, it does not write into them) without distrax, chex and tfp-nightly, plus
  `tensorflow-probability` stable and an importable stand-in `google.colab` package. It
  is built once and kept while requirements-newest.txt and this recipe stay the same;
- for each chapter a fresh kernel, started like Colab's (`import google.colab` first),
  that executes the chapter's setup cell, in a throwaway copy of that environment when
  the cell installs something;
- then the checks: the cell ran without error, pip reported no error, every package the
  cell installs is there at its pin, and jax/jaxlib are still the environment's own (a
  setup cell never replaces Colab's JAX).

Only the newest-JAX leg (`make test-newest`) runs it: the test runs where `make
test-newest` set BOOK_LEG=newest, or where the installed jax and jaxlib are
requirements-newest.txt's pins; it skips elsewhere, whatever the Python version.
"""

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.book import (
    CHAPTERS,
    NOTEBOOKS,
    ROOT,
    load_notebook,
    requirement_pins,
    setup_cell,
    source,
)

NEWEST = requirement_pins("requirements-newest.txt")
if os.environ.get("BOOK_LEG") != "newest" and (version("jax"), version("jaxlib")) != (
    NEWEST["jax"],
    NEWEST["jaxlib"],
):
    pytest.skip(
        "runs in the newest-JAX environment only (make test-newest sets BOOK_LEG=newest); "
        f"this one has jax {version('jax')}, requirements-newest.txt pins {NEWEST['jax']}",
        allow_module_level=True,
    )

WORK = ROOT / "_build" / "colab-newest"
BASE = WORK / "base"
# TensorFlow Probability's stable release, which Colab ships (the newest one on PyPI).
COLAB_TFP = "tensorflow-probability==0.25.0"
# What Colab lacks among the book's pins: the setup cells install these.
NOT_ON_COLAB = ["distrax", "chex", "tfp-nightly", "equinox", "grain"]
# Stand-ins for the google.colab package a Colab kernel imports at start, and for its `output`
# module, which jax imports when it finds google.colab (for its Colab debugger UI).
FAKE_COLAB = {
    "__init__.py": '"""Stand-in for google.colab: a Colab kernel imports it at start."""\n',
    "output.py": (
        '"""Stand-in for google.colab.output (jax imports it in Colab; nothing here calls it)."""\n'
        "\n\ndef _colab_only(*args, **kwargs):\n"
        '    raise NotImplementedError("only a real Colab runtime has google.colab.output")\n'
        "\n\neval_js = use_tags = redirect_to_element = clear = _colab_only\n"
    ),
}
RECIPE = "2"  # bump when the base environment's recipe below changes


def pip_pins(cell):
    """{name: version} for each `name==version` on the cell's %pip install lines."""
    pins = {}
    for line in cell.splitlines():
        if re.match(r"\s*[%!]pip install", line):
            pins.update(re.findall(r"([A-Za-z0-9_.\-]+)==([A-Za-z0-9_.\-+]+)", line))
    return pins


def run(*command):
    subprocess.run([str(part) for part in command], check=True, cwd=ROOT)


def python(env):
    return env / "bin" / "python"


def base_environment():
    """The Colab-like environment, built from .venv-newest once per
    requirements-newest.txt.

    A file lock makes pytest-xdist's workers build it once and wait for it.
    """
    WORK.mkdir(parents=True, exist_ok=True)
    with open(WORK / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _base_environment()


def _base_environment():
    key = hashlib.sha256(
        (
            (ROOT / "requirements-newest.txt").read_text()
            + (ROOT / "requirements-base.txt").read_text()
            + COLAB_TFP
            + str(FAKE_COLAB)
            + RECIPE
        ).encode()
    ).hexdigest()
    stamp = BASE / ".colab-base"
    if stamp.exists() and stamp.read_text() == key:
        return BASE
    venv = Path(sys.prefix)
    assert (venv / "pyvenv.cfg").exists(), (
        "run this test inside .venv-newest (make test-newest)"
    )
    shutil.rmtree(BASE, ignore_errors=True)
    WORK.mkdir(parents=True, exist_ok=True)
    run("cp", "-al", venv, BASE)
    run(python(BASE), "-m", "pip", "uninstall", "--quiet", "--yes", *NOT_ON_COLAB)
    run(python(BASE), "-m", "pip", "install", "--quiet", COLAB_TFP)
    site = Path(
        subprocess.check_output(
            [
                python(BASE),
                "-c",
                "import sysconfig; print(sysconfig.get_paths()['purelib'])",
            ],
            text=True,
        ).strip()
    )
    (site / "google" / "colab").mkdir(parents=True, exist_ok=True)
    for name, text in FAKE_COLAB.items():
        (site / "google" / "colab" / name).write_text(text)
    stamp.write_text(key)
    return BASE


def kernel_spec(env, home):
    """A kernel spec that starts `env`'s Python the way Colab starts its kernel."""
    spec = home / "kernels" / "colab-emulated"
    spec.mkdir(parents=True)
    argv = [
        str(python(env)),
        "-m",
        "ipykernel_launcher",
        "-f",
        "{connection_file}",
        "--IPKernelApp.exec_lines=import google.colab",
    ]
    (spec / "kernel.json").write_text(
        json.dumps(
            {"argv": argv, "display_name": "Colab (emulated)", "language": "python"}
        )
    )
    return "colab-emulated"


CHECK = """
import json, sys
from importlib.metadata import version
print(json.dumps({
    "colab": "google.colab" in sys.modules,
    "jax": version("jax"), "jaxlib": version("jaxlib"),
    "pins": {name: version(name) for name in %r},
}))
"""


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_setup_cell_runs_as_in_colab(path, tmp_path, monkeypatch):
    cell = source(setup_cell(load_notebook(path)))
    pins = pip_pins(cell)
    base = base_environment()
    env = base
    if (
        pins
    ):  # the cell installs: give it a throwaway copy (hard links need the same disk)
        env = WORK / f"throwaway-{path.stem}"
        shutil.rmtree(env, ignore_errors=True)
        run("cp", "-al", base, env)
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    kernel = kernel_spec(env, tmp_path / "jupyter")
    own = json.loads(
        subprocess.check_output(
            [python(env), "-c", CHECK % ([],)], text=True, cwd=CHAPTERS
        )
    )

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(cell),
        nbformat.v4.new_code_cell(CHECK % (list(pins),)),
    ]
    NotebookClient(
        notebook,
        kernel_name=kernel,
        timeout=600,
        resources={"metadata": {"path": str(CHAPTERS)}},
    ).execute()

    printed = "".join(output.get("text", "") for output in notebook.cells[0].outputs)
    assert "ERROR" not in printed, (
        f"pip reported an error in {path.name}'s setup cell:\n{printed}"
    )
    state = json.loads(notebook.cells[1].outputs[0]["text"])
    assert state["colab"], "the kernel did not start like Colab's"
    assert state["pins"] == pins, (
        f"{path.name}: installed {state['pins']}, the cell pins {pins}"
    )
    assert (state["jax"], state["jaxlib"]) == (own["jax"], own["jaxlib"]), (
        f"{path.name}'s setup cell replaced Colab's JAX {own['jax']} with {state['jax']}"
    )
    if pins:
        shutil.rmtree(env)
