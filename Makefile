# The two commands of the README's quick start: `make demo` and `make test`.
# Both create .venv on first use from the project's own files (pyproject.toml).

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test bench docs clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# The main job: lint the bundled captures (clean and broken ones).
demo: $(STAMP)
	@echo "== conforming streams (expect: all ok)"
	$(BIN)/sse-check lint captures/conforming --color always || true
	@echo "== real llama-server streams under --profile llama.cpp (documented deviations as info)"
	$(BIN)/sse-check lint captures/llama.cpp/reasoning_one_call.sse captures/llama.cpp/reasoning_text_truncated.sse --profile llama.cpp --fail-on warning --color always || true
	@echo "== the same streams under --profile openai (what strict clients see), with a timeline"
	$(BIN)/sse-check lint captures/llama.cpp/reasoning_one_call.sse --profile openai --timeline --color always || true
	@echo "== broken examples, one per rule (summary table at the end)"
	$(BIN)/sse-check lint captures/rules --color always > $(VENV)/demo-rules.txt || true
	@tail -n 12 $(VENV)/demo-rules.txt

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python bench/bench.py

docs: $(STAMP)
	$(BIN)/python -m checker.rules.docs docs/rules

clean:
	rm -rf $(VENV) .pytest_cache
