"""Repetition rules: one scenario probed several times (``sse-check probe --repeat N``).

A single exchange cannot show these: they compare the verdicts of the runs of one scenario. The logic is
``checker.live.repeat`` (no I/O); ``checker.commands.probe_repeat`` runs the scenarios and reports. Each run's
own capture (saved as ``DIR/rK/NAME.sse``) lints to that run's findings; this finding is about the runs
together, so it has no bad capture of its own: its bad and good examples are the serve-backed tests in
tests/live/test_probe_repeat.py (a server whose answers change between requests, and one whose do not).
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
