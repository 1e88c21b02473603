# Quick start: `make demo` runs vaultsync on the bundled example vault; `make test` runs the tests.
# Both create ./.venv on first use (Python >= 3.11).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: demo test bench install
install: $(VENV)/.installed
$(VENV)/.installed: pyproject.toml
	@echo "installing vaultsync and its dependencies into $(VENV) (1-3 min the first time)..."
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[search,test]'
	touch $@

demo: install
	$(PY) examples/demo.py

test: install
	$(PY) -m pytest -q -n 2 --dist loadfile  # two workers, a test file per worker
