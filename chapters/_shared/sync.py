"""Write the book's shared helpers into the notebooks that use them.

Each notebook runs alone in Colab, so a helper that several chapters need is copied into
each of them. The one source of each copy is a top-level `def` or `class` in a module of
this folder (chapters/_shared/*.py; their imports are there for linting and are not
copied). This script finds, in every chapters/*.ipynb code cell, each top-level
definition with a shared helper's name and replaces its text (decorators included) with
the source's, leaving the rest of the cell as it is. A notebook that does not define a
helper does not get it: to use one in a new chapter, paste it once into the cell where
it belongs, then run this script.

    python chapters/_shared/sync.py          # write the copies; print what changed
    python chapters/_shared/sync.py --check  # change nothing; exit 1 if a copy differs

tests/test_shared_helpers.py runs the check and reports a helper used by fewer than two
notebooks (then it belongs in its chapter, not here).
"""

import argparse
import ast
import json
import sys
from pathlib import Path

SHARED = Path(__file__).resolve().parent
CHAPTERS = SHARED.parent
ROOT = CHAPTERS.parent

# Top-level names that several notebooks define differently on purpose, with the reason:
# different functions that happen to share a name, each chapter's own model or step.
# Every other name defined in two or more notebooks must be a shared helper above.
MAY_DIFFER = {
    "concentrated_neg_elbo": "ch. 11 takes log S^2 and the sum of log Y!, the PLN "
    "appendix S^2 (the same bound)",
    "affine": "ch. 3 maps (params, x), ch. 5 a fixed affine map of one vector",
    "init_mlp": "ch. 7 and ch. 8 build different networks",
    "mlp": "ch. 7 and ch. 8 build different networks",
    "logistic_loss": "ch. 4 takes (w, X, y), ch. 8 a params pytree and a batch",
    "predict": "ch. 3 and ch. 12 predict with different models",
    "scale": "ch. 6 and the migration appendix show different functions",
    "train_step": "each chapter trains its own model with its own optimizer state",
}


def source_modules():
    return sorted(p for p in SHARED.glob("*.py") if p.name != Path(__file__).name)


def python_source(text):
    """A code cell's text with IPython magics and shell lines made `pass` (same lines);
    None for a cell magic (`%%...`), whose body is not Python."""
    if text.lstrip().startswith("%%"):
        return None
    lines = []
    for line in text.split("\n"):
        stripped = line.lstrip()
        is_magic = stripped.startswith(("%", "!"))
        lines.append(line[: len(line) - len(stripped)] + "pass" if is_magic else line)
    return "\n".join(lines)


def definitions(text):
    """[(name, start, end)]: each top-level def or class of `text` (a module or a code
    cell) as character offsets, from the first decorator's line to the end of the
    body."""
    python = python_source(text)
    if python is None:
        return []
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    found = []
    for node in ast.parse(python).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            end = starts[node.end_lineno - 1] + node.end_col_offset
            found.append((node.name, starts[first - 1], end))
    return found


def helpers():
    """{name: text} of every shared helper, from this folder's modules."""
    shared = {}
    for module in source_modules():
        text = module.read_text()
        for name, start, end in definitions(text):
            if name in shared:
                raise SystemExit(f"{module.name}: {name} is defined twice in {SHARED}")
            shared[name] = text[start:end]
    return shared


def cell_text(cell):
    return (
        cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
    )


def synced(text, shared):
    """`text` with each top-level definition of a shared helper replaced by the
    source's."""
    for name, start, end in reversed(definitions(text)):
        if name in shared:
            text = text[:start] + shared[name] + text[end:]
    return text


def notebooks():
    return sorted(CHAPTERS.glob("*.ipynb"))


def usage(shared=None):
    """{helper: [notebook names that define it]} (an empty list for an unused
    helper)."""
    shared = helpers() if shared is None else shared
    used = {name: [] for name in shared}
    for path in notebooks():
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "code":
                for name, _, _ in definitions(cell_text(cell)):
                    if name in used and path.name not in used[name]:
                        used[name].append(path.name)
    return used


def sync(write):
    """[(notebook name, helper)] for each copy that differs from its source; with
    `write`, the notebooks are rewritten with the source's text (in the notebooks' own
    JSON style)."""
    shared = helpers()
    changed = []
    for path in notebooks():
        raw = path.read_text()
        notebook = json.loads(raw)
        dirty = False
        for cell in notebook["cells"]:
            if cell["cell_type"] != "code":
                continue
            before = cell_text(cell)
            after = synced(before, shared)
            if after == before:
                continue
            old = {n: before[s:e] for n, s, e in definitions(before)}
            changed += [
                (path.name, n) for n in shared if n in old and old[n] != shared[n]
            ]
            dirty = True
            if isinstance(cell["source"], str):
                cell["source"] = after
            else:
                cell["source"] = after.splitlines(keepends=True)
        if write and dirty:
            path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")
    return changed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 on a difference"
    )
    args = parser.parse_args()
    changed = sync(write=not args.check)
    verb = "differs from" if args.check else "rewritten from"
    for notebook, name in changed:
        print(f"{notebook}: {name} {verb} chapters/_shared")
    for name, users in usage().items():
        if len(users) < 2:
            print(f"note: {name} is used by {len(users)} notebook(s): {users}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
