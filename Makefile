# The two commands of the README. Each creates and reuses the virtual environment itself.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test bench clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip==25.3
	$(BIN)/python -m pip install --quiet -e '.[dev,ray]'
	@touch $(STAMP)

run: $(STAMP)
	$(BIN)/cannpilot

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadfile

bench: $(STAMP)
	$(BIN)/cannpilot bench --rounds 3 --variants 4

clean:
	rm -rf $(VENV) build *.egg-info
