"""Which chapters to test: the ones you changed, directly or through a shared helper.

    python tests/changed.py                      # list them (make test-changed runs them)
    python tests/changed.py --helper NAME        # the chapters that use a shared helper
    python tests/changed.py --chapter 04         # chapters/04*.ipynb
    python tests/changed.py --run -n 2           # run them: main leg and both emulations

Changed means changed against the merge base with `main` (or against HEAD where there is
no main branch), committed or not: every changed chapters/*.ipynb, and every notebook
that defines a top-level function or class of chapters/_shared/*.py whose text changed
(chapters/_shared/sync.py finds the definitions; a change outside them, an import say,
reaches no notebook). With --run, pytest executes those notebooks on the main leg
(nbmake) and under both emulated precisions (tests/test_precision_emulation.py); the
arguments after --run are pytest's.
"""

import argparse
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "chapters"
SHARED = CHAPTERS / "_shared"


def load_sync():
    spec = importlib.util.spec_from_file_location("sync", SHARED / "sync.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def git(*args):
    done = subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True, check=False
    )
    return done.stdout if done.returncode == 0 else None


def base_commit():
    """The merge base with main, else HEAD."""
    for ref in ("main", "origin/main"):
        found = git("merge-base", ref, "HEAD")
        if found:
            return found.strip()
    return "HEAD"


def changed_files(base):
    """Paths (relative to the root) changed since `base`, in the working tree too."""
    names = set((git("diff", "--name-only", base) or "").split())
    names |= set((git("ls-files", "--others", "--exclude-standard") or "").split())
    return sorted(names)


def defined(sync, text):
    return {name: text[start:end] for name, start, end in sync.definitions(text)}


def changed_helpers(sync, base, files):
    """Names of shared helpers whose definition differs from `base` (added, removed or
    edited)."""
    names = set()
    for name in files:
        path = ROOT / name
        if path.parent != SHARED or path.suffix != ".py" or path.name == "sync.py":
            continue
        before = defined(sync, git("show", f"{base}:{name}") or "")
        after = defined(sync, path.read_text()) if path.exists() else {}
        names |= {
            n for n in before.keys() | after.keys() if before.get(n) != after.get(n)
        }
    return names


def users(sync, helpers):
    """Notebooks that define any of `helpers` (where sync.py writes their copies)."""
    found = set()
    for path in sorted(CHAPTERS.glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "code":
                names = {n for n, _, _ in sync.definitions(sync.cell_text(cell))}
                if names & helpers:
                    found.add(path)
    return found


def selected(args):
    sync = load_sync()
    notebooks = set()
    for chapter in args.chapter:
        matches = sorted(CHAPTERS.glob(f"{chapter}*.ipynb"))
        if len(matches) != 1:
            sys.exit(
                f"--chapter {chapter} matches {[m.name for m in matches]}, not one"
            )
        notebooks |= set(matches)
    if args.helper:
        unknown = set(args.helper) - set(sync.helpers())
        if unknown:
            sys.exit(f"not shared helpers (chapters/_shared/*.py): {sorted(unknown)}")
        notebooks |= users(sync, set(args.helper))
    if not (args.chapter or args.helper):
        base = base_commit()
        files = changed_files(base)
        notebooks |= {
            ROOT / name
            for name in files
            if name.startswith("chapters/")
            and name.endswith(".ipynb")
            and (ROOT / name).parent == CHAPTERS
            and (ROOT / name).exists()
        }
        notebooks |= users(sync, changed_helpers(sync, base, files))
    return sorted(notebooks)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chapter", action="append", default=[], metavar="NN")
    parser.add_argument("--helper", action="append", default=[], metavar="NAME")
    parser.add_argument(
        "--run", nargs=argparse.REMAINDER, help="run them with pytest (its arguments)"
    )
    args = parser.parse_args()
    notebooks = selected(args)
    names = [path.relative_to(ROOT).as_posix() for path in notebooks]
    if args.run is None:
        print("\n".join(names))
        return 0
    if not names:
        print(
            "No chapter changed and no shared helper that a chapter uses: nothing to run."
        )
        return 0
    print(
        "Testing (main leg, bfloat16 and TF32 emulation):", " ".join(names), flush=True
    )
    command = [
        str(Path(sys.executable).with_name("pytest")),
        *args.run,
        *names,
        "tests/test_precision_emulation.py",
        "-k",
        " or ".join(path.stem for path in notebooks),
    ]
    os.chdir(ROOT)
    os.execv(command[0], command)


if __name__ == "__main__":
    sys.exit(main())
