# make book       - create .venv if needed, execute every notebook (cached in _build/.jupyter_cache)
#                   and build the site into _build/html; --all re-reads every page so no warning hides
# make test       - both test legs, the main one first:
#   make test-main  - create .venv if needed, run pytest (every notebook via nbmake, the book's
#                     checks, the site build, the browser test)
#   make test-py312 - the readers' JAX leg: create .venv312 (Python 3.12, requirements-py312.txt)
#                     if needed, execute every notebook there, run the JAX guard (a strict xfail
#                     there) and each chapter's setup cell as Colab runs it
# make clean      - remove _build (executed outputs, execution cache, screenshots, Colab test envs)

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

# Python 3.12 for the readers' JAX leg: python3.12 from the PATH when it runs, else pyenv's newest
# 3.12 (pyenv's shim answers `python3.12` only where that version is activated).
ifndef PYTHON312
PYTHON312 := $(or $(shell python3.12 -c 'import sys; print(sys.executable)' 2>/dev/null),$(lastword $(sort $(wildcard $(HOME)/.pyenv/versions/3.12*/bin/python3.12))),python3.12)
endif
VENV312  := .venv312
BIN312   := $(VENV312)/bin
STAMP312 := $(VENV312)/.installed

.PHONY: venv venv312 book test test-main test-py312 clean

venv: $(STAMP)

venv312: $(STAMP312)

# Reinstalls when requirements.txt changes.
$(STAMP): requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $(STAMP)

# Reinstalls when requirements-py312.txt changes.
$(STAMP312): requirements-py312.txt
	test -x $(BIN312)/python || $(PYTHON312) -m venv $(VENV312)
	$(BIN312)/python -m pip install --quiet --upgrade pip
	$(BIN312)/python -m pip install --quiet -r requirements-py312.txt
	touch $(STAMP312)

book: $(STAMP)
	$(BIN)/jupyter-book build . --all -W -n --keep-going

test: test-main test-py312

test-main: $(STAMP)
	$(BIN)/pytest

test-py312: $(STAMP312)
	$(BIN312)/pytest chapters tests/test_jax_guard.py tests/test_colab_setup.py

clean:
	rm -rf _build

# make bench      - the race of chapter 11 (pyPLNmodels against the book's fit) on this machine:
#                   create .venv-bench (Python 3.11, requirements-bench.txt: the book's jax pins,
#                   CPU torch, pyPLNmodels) if needed, run tests/bench_pln.py, and rewrite the
#                   CPU rows of chapters/data/pln_bench.json (rows of other devices are kept)
PYTHON311   ?= python3.11
VENV_BENCH  := .venv-bench
STAMP_BENCH := $(VENV_BENCH)/.installed

.PHONY: bench

$(STAMP_BENCH): requirements-bench.txt
	test -x $(VENV_BENCH)/bin/python || $(PYTHON311) -m venv $(VENV_BENCH)
	$(VENV_BENCH)/bin/python -m pip install --quiet -r requirements-bench.txt
	touch $(STAMP_BENCH)

bench: $(STAMP_BENCH)
	$(VENV_BENCH)/bin/python tests/bench_pln.py --device cpu --append
