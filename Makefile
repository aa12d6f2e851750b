# make book  - create .venv if needed, execute every notebook (cached in _build/.jupyter_cache) and
#              build the site into _build/html; --all re-reads every page so no warning hides
# make test  - create .venv if needed, run pytest (every notebook via nbmake, the book's checks, the browser test)
# make clean - remove _build (executed outputs, execution cache, screenshots)

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: venv book test clean

venv: $(STAMP)

# Reinstalls when requirements.txt changes.
$(STAMP): requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $(STAMP)

book: $(STAMP)
	$(BIN)/jupyter-book build . --all -W -n --keep-going

test: $(STAMP)
	$(BIN)/pytest

clean:
	rm -rf _build
