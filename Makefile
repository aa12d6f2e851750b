# The book's commands; `make` (or `make help`) lists them. What each test checks is in its
# docstring; the tiers and the legs are described in CONTRIBUTING.md.

.DEFAULT_GOAL := help

# The main leg runs Python 3.11; the newest-JAX leg runs Python 3.12, as Colab does.
MAIN_PY   := 3.11
NEWEST_PY := 3.12
# Independent notebook executions run side by side (pytest-xdist), one per core.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

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
VENV_BENCH   := .venv-bench
BIN_BENCH    := $(VENV_BENCH)/bin
STAMP_BENCH  := $(VENV_BENCH)/.installed
# The browser test's axe-core (tests/package-lock.json), installed by npm ci
AXE := tests/node_modules/axe-core/axe.min.js

# $(call check_python,interpreter,version,variable): fail in one line unless `interpreter`
# is that version of Python and has the venv module.
check_python = @$(1) -c 'import sys, venv; sys.exit(sys.version_info[:2] != tuple(map(int, "$(2)".split("."))))' 2>/dev/null \
	|| { echo "make: needs Python $(2) with venv at '$(1)': install python$(2) and python$(2)-venv (Debian/Ubuntu: apt install python$(2) python$(2)-venv python3-venv; or pyenv install $(2)), or set $(3)=/path/to/python$(2)"; exit 1; }

# The checks that execute nothing (make check; make test runs them too), on $(JOBS) cores:
# one of them builds the site's sources with execution off (tests/test_book_sources.py).
STATIC_TESTS := tests/test_notebook_files.py tests/test_stripped.py tests/test_format.py \
	tests/test_repository.py tests/test_shared_helpers.py tests/test_paths.py tests/test_oaks_download.py \
	tests/test_pln_bench_record.py tests/test_site_cache.py tests/test_book_sources.py \
	tests/test_prose.py

# What `make fix` and the pre-commit hook strip (tests/test_stripped.py: they agree)
STRIP := $(BIN)/nbstripout --keep-id --extra-keys "cell.metadata.colab cell.metadata.executionInfo cell.metadata.outputId cell.metadata.id"
# The Python that ruff formats and lints, besides the notebooks
PY_DIRS := tests benchmarks chapters/_shared _ext

# The notebook that `make test-chapter CH=04` means: chapters/04*.ipynb (CH=appendix_numerics works too)
CHAPTER = $(wildcard chapters/$(CH)*.ipynb)

.PHONY: help venv venv-newest venv-bench check sync fix test-chapter test-changed test \
	test-main test-newest book prose diff-driver hooks bench bench-threads bench-compile bench-levels clean check-python \
	check-python-newest

help:
	@echo "make check                 every static check (files, format, lint, pins, workflows, helpers, paths, links, prose budgets), the sources built unexecuted; < 1 min"
	@echo "make fix                   strip the notebooks, ruff format, ruff check --fix, make sync"
	@echo "make test-changed          the chapters you changed or whose shared helpers you changed (vs main), on the main leg and both emulations"
	@echo "make test-chapter CH=04    one chapter executed on the main leg and under both emulated precisions"
	@echo "make test-chapter HELPER=interleaved_seconds   the same for every chapter that uses a shared helper"
	@echo "make test                  everything CI runs (.ci/run): test-main, then test-newest"
	@echo "  make test-main           .venv: every notebook (nbmake, both emulations, alone as in Colab), every check, the site, the browser test"
	@echo "  make test-newest         .venv-newest: every notebook on the newest JAX, the JAX guard, each setup cell as in Colab"
	@echo "make book                  execute what the cache lacks and build the site into _build/html"
	@echo "make sync                  write chapters/_shared/*.py into the notebooks that use them"
	@echo "make prose                 each chapter as MyST text (jupytext) under _build/prose/, for reading and review"
	@echo "make diff-driver           git diff/log/show notebooks as MyST text in this clone; make hooks: pre-commit install"
	@echo "make bench                 the race of chapter 11 (.venv-bench; run it on an idle machine)"
	@echo "make bench-threads         threads, fit()'s own work and Anderson in that race (idle machine, about 13 minutes)"
	@echo "make bench-compile         pyPLNmodels' steps compiled by torch.compile, in that race (idle machine, about 12 minutes)"
	@echo "make bench-levels          chapter 10's levels timed, two runs (idle machine, about 1.5 minutes)"
	@echo "make venv venv-newest      create the environments (the targets above do it when needed)"
	@echo "make clean                 remove _build (executed outputs, execution cache, screenshots)"
	@echo "Start with 'make check', then 'make test-chapter CH=NN' for the chapter you changed."

venv: $(STAMP)

venv-newest: $(STAMP_NEWEST)

venv-bench: $(STAMP_BENCH)

check-python:
	$(call check_python,$(PYTHON),$(MAIN_PY),PYTHON)

check-python-newest:
	$(call check_python,$(PYTHON_NEWEST),$(NEWEST_PY),PYTHON_NEWEST)

# Reinstalls when requirements.txt or the base file it includes changes.
$(STAMP): requirements.txt requirements-base.txt | check-python
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(call check_python,$(BIN)/python,$(MAIN_PY),PYTHON)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $(STAMP)

# Reinstalls when requirements-newest.txt or the base file it includes changes.
$(STAMP_NEWEST): requirements-newest.txt requirements-base.txt | check-python-newest
	test -x $(BIN_NEWEST)/python || $(PYTHON_NEWEST) -m venv $(VENV_NEWEST)
	$(call check_python,$(BIN_NEWEST)/python,$(NEWEST_PY),PYTHON_NEWEST)
	$(BIN_NEWEST)/python -m pip install --quiet --upgrade pip
	$(BIN_NEWEST)/python -m pip install --quiet -r requirements-newest.txt
	touch $(STAMP_NEWEST)

# The bench environment: the book's jax pins, CPU torch and pyPLNmodels (requirements-bench.txt).
$(STAMP_BENCH): requirements-bench.txt | check-python
	test -x $(BIN_BENCH)/python || $(PYTHON) -m venv $(VENV_BENCH)
	$(call check_python,$(BIN_BENCH)/python,$(MAIN_PY),PYTHON)
	$(BIN_BENCH)/python -m pip install --quiet -r requirements-bench.txt
	touch $(STAMP_BENCH)

# Reinstalls when tests/package-lock.json changes; npm ci installs exactly the locked version.
$(AXE): tests/package-lock.json
	npm ci --prefix tests --no-audit --no-fund --silent
	touch $(AXE)

check: $(STAMP)
	$(call check_python,$(BIN)/python,$(MAIN_PY),PYTHON)
	$(BIN)/pytest -q -n $(JOBS) $(STATIC_TESTS)

sync: $(STAMP)
	$(call check_python,$(BIN)/python,$(MAIN_PY),PYTHON)
	$(BIN)/python chapters/_shared/sync.py

# What the checks of `make check` can repair by themselves (then run `make check` again).
fix: $(STAMP)
	$(call check_python,$(BIN)/python,$(MAIN_PY),PYTHON)
	$(STRIP) chapters/*.ipynb
	$(BIN)/python chapters/_shared/sync.py
	$(BIN)/ruff format chapters $(PY_DIRS)
	-$(BIN)/ruff check --fix chapters $(PY_DIRS)

# CH=04 (chapters/04*.ipynb), or HELPER=name: every chapter that uses that shared helper.
test-chapter: $(STAMP)
	$(call check_python,$(BIN)/python,$(MAIN_PY),PYTHON)
	@test -n "$(CH)$(HELPER)" \
		|| { echo "make: name a chapter or a shared helper: make test-chapter CH=04, or HELPER=interleaved_seconds"; exit 1; }
	$(BIN)/python tests/changed.py $(addprefix --chapter ,$(CH)) $(addprefix --helper ,$(HELPER)) \
		--run -n $(JOBS)

# Every chapter changed against main (committed or not), and every chapter that uses a shared
# helper whose definition changed (tests/changed.py).
test-changed: $(STAMP)
	$(call check_python,$(BIN)/python,$(MAIN_PY),PYTHON)
	$(BIN)/python tests/changed.py --run -n $(JOBS)

test: test-main test-newest

# The site's tests: one build (from the execution cache) and one browser
SITE_TESTS := tests/test_site.py tests/test_site_pages.py

# Two runs: first every notebook execution (nbmake, both emulations, each notebook alone as
# in Colab) and every check that needs no site, on $(JOBS) cores (nbmake stores each executed
# notebook in the site's execution cache); then the site, built from that cache, and the
# browser test. The second runs even when the first failed.
test-main: $(STAMP) $(AXE)
	$(call check_python,$(BIN)/python,$(MAIN_PY),PYTHON)
	status=0; \
	$(BIN)/pytest -n $(JOBS) --dist worksteal $(addprefix --ignore=,$(SITE_TESTS)) || status=1; \
	$(BIN)/pytest $(SITE_TESTS) || status=1; \
	exit $$status

# BOOK_LEG=newest tells tests/test_colab_setup.py that it runs in the newest-JAX environment.
test-newest: $(STAMP_NEWEST)
	$(call check_python,$(BIN_NEWEST)/python,$(NEWEST_PY),PYTHON_NEWEST)
	BOOK_LEG=newest $(BIN_NEWEST)/pytest -n $(JOBS) --dist worksteal \
		chapters tests/test_jax_guard.py tests/test_colab_setup.py

book: $(STAMP)
	$(call check_python,$(BIN)/python,$(MAIN_PY),PYTHON)
	$(BIN)/jupyter-book build . --all -W -n --keep-going

# Each chapter and appendix as MyST Markdown (jupytext): the prose and code as text, to read
# or review (CONTRIBUTING.md, "Reviewing prose").
prose: $(STAMP)
	$(call check_python,$(BIN)/python,$(MAIN_PY),PYTHON)
	$(BIN)/python -c 'import pathlib, jupytext; out = pathlib.Path("_build/prose"); \
		out.mkdir(parents=True, exist_ok=True); \
		[jupytext.write(jupytext.read(p), out / f"{p.stem}.md", fmt="md:myst") \
		 for p in sorted(pathlib.Path("chapters").glob("*.ipynb"))]'
	@echo "make: the chapters as MyST text are in _build/prose/"

# git diff, log -p and show print notebooks as MyST text (.gitattributes names the driver;
# this sets it up in this clone's .git/config).
diff-driver: $(STAMP)
	git config diff.notebook.textconv "$(abspath $(BIN))/jupytext --quiet --to myst -o -"
	git config diff.notebook.cachetextconv true

# pre-commit runs .pre-commit-config.yaml's local hooks (this venv's tools) on each commit.
hooks: $(STAMP)
	$(BIN)/pre-commit install

# The race of chapter 11 (pyPLNmodels against the book's fit) on this machine: rewrites the
# CPU rows of chapters/data/pln_bench.json (rows of other devices are kept).
bench: $(STAMP_BENCH)
	$(call check_python,$(BIN_BENCH)/python,$(MAIN_PY),PYTHON)
	$(BIN_BENCH)/python benchmarks/bench_pln.py --device cpu --append

# The race's warm split (pyPLNmodels at its default threads and at one; the compiled Rprop and
# the book's fit with one OpenBLAS thread and with OpenBLAS's threads as found; the book's fit
# without Anderson): the "threads" entry of pln_bench.json. Idle machine.
bench-threads: $(STAMP_BENCH)
	$(call check_python,$(BIN_BENCH)/python,$(MAIN_PY),PYTHON)
	$(BIN_BENCH)/python benchmarks/bench_threads.py

# pyPLNmodels' steps eager, rewritten one function per step eager and compiled by
# torch.compile, and the compiled Rprop, pinned to one core: the "torch_compile" entry of
# pln_bench.json. Idle machine.
bench-compile: $(STAMP_BENCH)
	$(call check_python,$(BIN_BENCH)/python,$(MAIN_PY),PYTHON)
	$(BIN_BENCH)/python benchmarks/bench_threads.py --torch-compile

# Chapter 10's levels timed on an idle machine, in two fresh kernels: the "levels" entry of
# pln_bench.json, which the chapter prints beside its own run's table. Idle machine.
bench-levels: $(STAMP)
	$(call check_python,$(BIN)/python,$(MAIN_PY),PYTHON)
	$(BIN)/python benchmarks/bench_levels.py

clean:
	rm -rf _build
