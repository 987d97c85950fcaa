"""Repetition rules: one scenario probed several times (``sse-check probe --repeat N``).

A single exchange cannot show these: they compare the verdicts of the runs of one scenario. The logic is
``checker.live.repeat`` (no I/O); ``checker.commands.probe_repeat`` runs the scenarios and reports. Each run's
own capture (saved as ``DIR/rK/NAME.sse``) lints to that run's findings; this finding is about the runs
together, so it has no bad capture of its own: its bad and good examples are the serve-backed tests in
tests/live/test_probe_repeat.py (a server whose answers change between requests, and one whose do not) and
tests/live/test_probe_load.py (a server that fails only while other requests are being answered, and one
that does not).
"""

from checker.rules.registry import rule

FLAKY_VERDICT = rule(
    "RPT001", "flaky-verdict", "warning",
    "{scenario}: the verdict changed between runs ({same} of {total} runs: {usual}); {how}",
    summary="Flags a scenario whose verdict is not the same in every run of `probe --repeat N`: passed in some "
            "runs and failed in others, a different set of finding codes, a different HTTP status or ending.",
    why="A server that is right only some of the time breaks clients some of the time: a CI gate on one probe "
        "passes or fails by luck, and the defect a user meets in production is not the one the last probe "
        "saw. The runs that differed (numbered from 1) and how are named, so their saved captures can be "
        "compared (`sse-check diff DIR/r1/NAME.sse DIR/rK/NAME.sse`).",
    sources=("docs/spec.md §12 (repetition: flaky verdicts and latency percentiles)",
             "openai-python src/openai/_base_client.py (_should_retry: 408, 409, 429 and 5xx are retried, so "
             "a transient failure is expected and survivable only for those statuses)"),
    good="conforming/text.sse",
    example=False,
)

LOAD_VERDICT = rule(
    "RPT002", "load-dependent-verdict", "warning",
    "{scenario}: a verdict seen only under load, never in {total} runs at concurrency {base} ({usual}); {how}",
    summary="Flags a scenario whose runs at a higher `--concurrency` (`probe --repeat N --concurrency 1,8`) had "
            "a verdict that none of its runs at the lowest level had: a failure, another set of finding codes, "
            "another HTTP status or ending, a refusal retried, that only concurrent requests bring.",
    why="Real clients do not send one request at a time: openai-python's default pool allows 1000 connections, "
        "agents run tool turns and sub-agents in parallel, and a server behind a gateway serves many users at "
        "once. A server that answers one request right and several at once wrong (a 503 or 429 when its slots "
        "are busy, a stream cut or interleaved under load, a changed event order) passes every sequential probe "
        "and fails in production. The level, the verdict and the runs that had it are named, so their saved "
        "captures (`DIR/cC/rK/NAME.sse`) can be compared with the lowest level's (`sse-check diff`).",
    sources=("docs/spec.md §12 (repetition: flaky verdicts, latency percentiles, verdicts under load)",
             "openai-python src/openai/_constants.py (DEFAULT_CONNECTION_LIMITS: max_connections=1000, so one "
             "client sends many requests at once)",
             "openai-python src/openai/_base_client.py (_should_retry: 429 and 5xx are retried, the refusals a "
             "busy server answers)"),
    good="conforming/text.sse",
    example=False,
)
