# make book        - create .venv if needed, execute every notebook (cached in _build/.jupyter_cache)
#                    and build the site into _build/html; --all re-reads every page so no warning hides
# make test        - both test legs, the main one first:
#   make test-main   - create .venv if needed, run pytest (every notebook via nbmake, the book's
#                      checks, the workflow and pin checks, the site build, the browser test)
#   make test-newest - the newest-JAX leg: create .venv-newest (Python 3.12,
#                      requirements-newest.txt) if needed, execute every notebook there, run the
#                      JAX guard (a strict xfail there) and each chapter's setup cell as Colab runs it
# make clean       - remove _build (executed outputs, execution cache, screenshots, Colab test envs)
#
# Each leg checks its Python version first and says in one line what to install when it is missing.

# The main leg runs Python 3.11; the newest-JAX leg runs Python 3.12, as Colab does.
MAIN_PY   := 3.11
NEWEST_PY := 3.12

# python3.11 / python3.12 from the PATH when they run, else pyenv's newest of that version
# (pyenv's shim answers `python3.12` only where that version is activated). Override with
# `make PYTHON=/path/to/python3.11 PYTHON_NEWEST=/path/to/python3.12`.
find_python = $(or $(shell python$(1) -c 'import sys; print(sys.executable)' 2>/dev/null),$(lastword $(sort $(wildcard $(HOME)/.pyenv/versions/$(1).*/bin/python$(1)))),python$(1))
ifndef PYTHON
PYTHON := $(call find_python,$(MAIN_PY))
endif
ifndef PYTHON_NEWEST
PYTHON_NEWEST := $(call find_python,$(NEWEST_PY))
endif

VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
VENV_NEWEST  := .venv-newest
BIN_NEWEST   := $(VENV_NEWEST)/bin
STAMP_NEWEST := $(VENV_NEWEST)/.installed

# $(call check_python,interpreter,version): fail in one line unless `interpreter` is that
# version of Python and has the venv module.
check_python = @$(1) -c 'import sys, venv; sys.exit(sys.version_info[:2] != tuple(map(int, "$(2)".split("."))))' 2>/dev/null \
	|| { echo "make: needs Python $(2) with venv at '$(1)': install python$(2) and python$(2)-venv (Debian/Ubuntu: apt install python$(2) python$(2)-venv python3-venv; or pyenv install $(2)), or set $(3)=/path/to/python$(2)"; exit 1; }

.PHONY: venv venv-newest book test test-main test-newest clean check-python check-python-newest

venv: $(STAMP)

venv-newest: $(STAMP_NEWEST)

check-python:
	$(call check_python,$(PYTHON),$(MAIN_PY),PYTHON)

check-python-newest:
	$(call check_python,$(PYTHON_NEWEST),$(NEWEST_PY),PYTHON_NEWEST)

# Reinstalls when requirements.txt changes.
$(STAMP): requirements.txt | check-python
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(call check_python,$(BIN)/python,$(MAIN_PY),PYTHON)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $(STAMP)

# Reinstalls when requirements-newest.txt changes.
$(STAMP_NEWEST): requirements-newest.txt | check-python-newest
	test -x $(BIN_NEWEST)/python || $(PYTHON_NEWEST) -m venv $(VENV_NEWEST)
	$(call check_python,$(BIN_NEWEST)/python,$(NEWEST_PY),PYTHON_NEWEST)
	$(BIN_NEWEST)/python -m pip install --quiet --upgrade pip
	$(BIN_NEWEST)/python -m pip install --quiet -r requirements-newest.txt
	touch $(STAMP_NEWEST)

book: $(STAMP)
	$(BIN)/jupyter-book build . --all -W -n --keep-going

test: test-main test-newest

test-main: $(STAMP)
	$(call check_python,$(BIN)/python,$(MAIN_PY),PYTHON)
	$(BIN)/pytest

# BOOK_LEG=newest tells tests/test_colab_setup.py that it runs in the newest-JAX environment.
test-newest: $(STAMP_NEWEST)
	$(call check_python,$(BIN_NEWEST)/python,$(NEWEST_PY),PYTHON_NEWEST)
	BOOK_LEG=newest $(BIN_NEWEST)/pytest chapters tests/test_jax_guard.py tests/test_colab_setup.py

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
