"""Labels of the mutant corpus: what each real client did with each mutant, and how that compares to sse-check.

``python tests/mutant_labels.py write`` (``make mutant-labels``) builds the mutants of ``tests/mutant_corpus.py``
from their seed, runs every real client that is installed here on every mutant of its dialect, and writes one
JSON lines file per dialect and client, ``tests/mutant_labels/<dialect>.<client>.jsonl``: per mutant its id and
the client's normalised outcome (``checker.oracles.protocol.Outcome``: raised or not, in the client's own words;
the final text, tool calls with arguments, status or finish reason, and the final items or completion the
oracles compare). ``tests/mutant_labels/manifest.json`` records the seed, the corpus digest per dialect and each
client's version. The clients are the registry's (checker/oracles/registry.py: every client registered for the
dialect and installed here), run by its batch runner over real loopback HTTP: one loopback server and one
client process per batch of mutants.

``python tests/mutant_labels.py report`` prints the agreement of sse-check's predictions with the stored labels,
per dialect, client and mutation class (``N agree of M``), and the disagreeing classes with an example.

What a label means as a verdict (:func:`observed`), the same reading as the bundled captures' oracle tests
(tests/test_client_oracles.py, tests/test_chat_oracles.py, tests/test_messages_oracles.py):

* ``breaks``: the client's user-facing call raised;
* ``ok``: it returned exactly what the stream carried (as sse-check's machine followed the stream);
* ``degraded``: it returned something else.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # run as a script: the test helpers beside it import as in the test suite
    sys.path.insert(0, str(HERE))

import mutant_corpus as corpus  # noqa: E402
from mutant_corpus import Mutant  # noqa: E402

LABELS = HERE / "mutant_labels"
MANIFEST = LABELS / "manifest.json"
BATCH = 400


_PORT = re.compile(r"127\.0\.0\.1:\d+")
# An id a client makes up (openai-node's call_<uuid> for a tool call without one) differs on every run too.
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def normalised(outcome: dict[str, Any]) -> dict[str, Any]:
    """An outcome as stored: plain JSON (lists, not tuples), the loopback server's port out of the client's
    words and the ids a client invents (they differ on every run)."""
    text = json.dumps(outcome, ensure_ascii=False, sort_keys=True)
    return dict(json.loads(_UUID.sub("<uuid>", _PORT.sub("127.0.0.1:PORT", text))))


def label_path(dialect: str, client: str) -> Path:
    return LABELS / f"{dialect}.{client}.jsonl"


# --- running the clients -----------------------------------------------------------------------------------
#
# Every client of the registry (checker/oracles/registry.py) that speaks the dialect, run by its batch runner
# (checker/oracles/runner.py: one loopback server and one client process per batch): a client registered there
# is labelled here with no change to this file.


def _strip(raw: dict[str, Any]) -> dict[str, Any]:
    """An outcome as a label: without what is the same for every run (client, version, dialect, mode) or says
    nothing of the result (how many events it read); a chat completion as the oracles compare it."""
    from checker.oracles.chat import completion_view

    out = {k: v for k, v in raw.items() if k not in ("client", "version", "dialect", "mode", "events", "chunks")}
    completion = out.get("completion")
    # A driver may report the SDK's completion as it is (openai-node) or already as the compared view
    # (openai-python's in-process oracle): the view is taken of a completion only.
    if isinstance(completion, dict) and any(isinstance(c, dict) and "message" in c
                                            for c in completion.get("choices") or ()):
        out["completion"] = completion_view(completion)
    if out.get("failure") is not None:  # the oracle could not run the client: no verdict can be read from it
        out = {"oracle_failed": out["failure"]}
    return out


def clients(dialect: str) -> tuple[str, ...]:
    """The registered real clients that speak ``dialect``, in registry order."""
    from checker.oracles import registry

    return tuple(c.name for c in registry.for_dialect(dialect))


def available(client: str) -> str | None:
    """Why ``client`` cannot run here (with its install hint), or None."""
    from checker.oracles import registry

    return registry.unavailable(registry.get(client))


def run_client(client: str, dialect: str, items: Sequence[Mutant]) -> tuple[str, list[dict[str, Any]]]:
    """(the client's pinned version, the normalised outcome of each mutant, in order)."""
    from checker.oracles import registry, runner

    outcomes: list[dict[str, Any]] = []
    for start in range(0, len(items), BATCH):
        batch = items[start:start + BATCH]
        # The source's sidecars give the request (tools, response format) and the recorded headers; the body is
        # the mutant's.
        jobs = [runner.job_for(corpus.CAPTURES / m.source, dialect, body=m.data) for m in batch]
        outcomes += [_strip(o.as_dict()) for o in runner.run_batch(client, jobs)]
    return registry.get(client).version, outcomes


# --- labels ------------------------------------------------------------------------------------------------


def read_labels(dialect: str, client: str) -> dict[str, dict[str, Any]]:
    path = label_path(dialect, client)
    if not path.is_file():
        return {}
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        raw = json.loads(line)
        out[raw.pop("id")] = raw
    return out


def read_manifest() -> dict[str, Any]:
    return json.loads(MANIFEST.read_text()) if MANIFEST.is_file() else {}


def write(dialects: Sequence[str], only: Sequence[str] = ()) -> int:
    LABELS.mkdir(exist_ok=True)
    for dialect in dialects:
        items = corpus.mutants(dialect)
        _update_manifest(lambda m: m["dialects"].__setitem__(dialect, {
            "mutants": len(items), "digest": corpus.digest(items), "sources": len(corpus.sources(dialect))}))
        for client in clients(dialect):
            if only and client not in only:
                continue
            why = available(client)
            if why is not None:
                print(f"{dialect} {client}: not run: {why}", file=sys.stderr)
                continue
            version, outcomes = run_client(client, dialect, items)
            lines = [json.dumps({"id": m.id, **normalised(o)}, ensure_ascii=False, sort_keys=True)
                     for m, o in zip(items, outcomes, strict=True)]
            label_path(dialect, client).write_text("\n".join(lines) + "\n", encoding="utf-8")
            _update_manifest(lambda m: m["clients"].__setitem__(f"{dialect}.{client}",
                                                                {"version": version, "labels": len(lines)}))
            print(f"{dialect} {client} {version}: {len(lines)} labels", file=sys.stderr)
    return 0


def _update_manifest(change: Any) -> None:
    """Read, change and write the manifest at once (labellers of different clients may run side by side)."""
    manifest = read_manifest() or {"dialects": {}, "clients": {}}
    manifest["seed"] = corpus.SEED
    change(manifest)
    MANIFEST.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


# --- what a label says, and what sse-check predicts --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Compared:
    """One client on one mutant: the predicted verdict, the observed one, whether they agree, and why not."""

    predicted: str
    observed: str
    agrees: bool
    decided_by: str
    detail: str


@functools.cache
def _declaration(source: str) -> Any:
    from test_corpus import declaration

    return declaration(corpus.CAPTURES / source)


def lint(m: Mutant) -> tuple[Any, Any]:
    from checker.engine import StreamLinter
    from checker.profiles import get_profile

    decl = _declaration(m.source)
    # As the dialect the client asked for (its endpoint says it, as a probe knows it): a mutant whose first event
    # lost what shows its dialect is still an answer of that API.
    linter = StreamLinter(profile=get_profile("openai"), request=decl.request, limits=decl.limits, keep_texts=True,
                          dialect=m.dialect)
    linter.feed(m.data)
    return linter.close(), linter


def _observed_responses(label: dict[str, Any], result: Any, linter: Any) -> tuple[str, str]:
    from test_client_oracles import _expected, _texts

    if label.get("raised") is not None:
        return "breaks", f"raises {label['raised']}"
    output = label.get("output") or []
    got = [(o.get("type"), o.get("id")) for o in output]
    want = _expected(result)
    status = (result.terminal or "").removeprefix("response.") or None
    if got != want:
        return "degraded", f"final output {got}, the stream finished {want}"
    for o, streamed in zip(output, _texts(linter, result), strict=False):
        if streamed is not None and o.get("text") != streamed:
            return "degraded", f"{o.get('type')} {o.get('id')}: text {o.get('text')!r}, streamed {streamed!r}"
    if label.get("status") != status:
        return "degraded", f"status {label.get('status')}, the stream ended {status}"
    return "ok", "the stream's items and texts"


def _observed_chat(label: dict[str, Any], result: Any, linter: Any) -> tuple[str, str]:
    from checker.oracles.chat import differences, expected_view

    if label.get("raised") is not None:
        return "breaks", f"raises {label['raised']}"
    machine = linter.machine
    if not hasattr(machine, "choice_texts"):
        return "degraded", "sse-check did not read the stream as Chat Completions"
    found = differences(label.get("completion") or {}, expected_view(machine.first or {}, machine.usage,
                                                                       tuple(machine.choice_texts())))
    return ("degraded", "; ".join(found)) if found else ("ok", "the streamed completion")


def _observed_messages(label: dict[str, Any], result: Any, linter: Any) -> tuple[str, str]:
    from test_messages_oracles import expected_blocks

    if label.get("raised") is not None:
        return "breaks", f"raises {label['raised']}"
    stop_reason = getattr(linter.machine, "stop_reason", None)
    want = expected_blocks(result, stop_reason)
    got = [(o.get("type"), o.get("id"), o.get("text")) for o in label.get("output") or []]
    same = len(got) == len(want) and all(g == tuple(w) or (w[2] is None and g[:2] == tuple(w[:2]))
                                         for g, w in zip(got, want, strict=False))
    if not same:
        return "degraded", f"blocks {got}, the stream built {want}"
    if label.get("status") != stop_reason:
        return "degraded", f"stop_reason {label.get('status')}, streamed {stop_reason}"
    if stop_reason is None:
        # A message handed over as final with no stop_reason never finished (no message_delta said how it
        # ended): the user cannot tell it from a complete answer. tests/test_messages_oracles.py reads it so too.
        return "degraded", "the final message has no stop_reason"
    return "ok", "the stream's blocks"


OBSERVERS = {"responses": _observed_responses, "chat": _observed_chat, "messages": _observed_messages}


def _beyond_view(dialect: str) -> dict[str, str]:
    """The codes whose ``degraded`` the oracles' view cannot show (each oracle test's list, with its reason)."""
    if dialect == "responses":
        from test_client_oracles import DEGRADED_BEYOND_TEXT
        return DEGRADED_BEYOND_TEXT
    if dialect == "chat":
        from test_chat_oracles import DEGRADED_BEYOND_VIEW
        return DEGRADED_BEYOND_VIEW
    from test_messages_oracles import DEGRADED_BEYOND_VIEW as MESSAGES_BEYOND
    return MESSAGES_BEYOND


def compare(m: Mutant, client: str, label: dict[str, Any], linted: tuple[Any, Any] | None = None) -> Compared:
    from checker.compat import matrix

    result, linter = linted or lint(m)
    cell = matrix(result)[client]
    predicted = str(cell.verdict)
    observed, detail = OBSERVERS[m.dialect](label, result, linter)
    decided = cell.finding.code if cell.finding is not None else (cell.cause or "no finding")
    agrees = predicted == observed
    if not agrees and predicted == "degraded" and observed == "ok" and cell.finding is not None:
        agrees = cell.finding.code in _beyond_view(m.dialect)  # a difference outside the oracle's view
    return Compared(predicted, observed, agrees, decided, detail)


def compare_all(dialects: Sequence[str] = corpus.DIALECTS) -> dict[tuple[str, str], list[tuple[Mutant, Compared]]]:
    """Every stored label compared with today's prediction: (dialect, client) -> [(mutant, comparison)]."""
    out: dict[tuple[str, str], list[tuple[Mutant, Compared]]] = {}
    for dialect in dialects:
        items = corpus.mutants(dialect)
        per_client = {c: read_labels(dialect, c) for c in clients(dialect)}
        per_client = {c: labels for c, labels in per_client.items() if labels}
        for client in per_client:
            out[(dialect, client)] = []
        for m in items:
            linted = lint(m)
            for client, labels in per_client.items():
                if m.id in labels and "oracle_failed" not in labels[m.id]:
                    out[(dialect, client)].append((m, compare(m, client, labels[m.id], linted)))
    return out


def report(dialects: Sequence[str], examples: int = 1, stream: Any = sys.stdout) -> int:
    compared = compare_all(dialects)
    for (dialect, client), rows in compared.items():
        agree = sum(c.agrees for _, c in rows)
        print(f"== {dialect} {client}: {agree} agree of {len(rows)}", file=stream)
        by_class: dict[str, list[tuple[Mutant, Compared]]] = defaultdict(list)
        for m, c in rows:
            by_class[m.mutation_class].append((m, c))
        for klass in sorted(by_class):
            group = by_class[klass]
            n = sum(c.agrees for _, c in group)
            print(f"  {klass:26} {n:5} of {len(group):5}", file=stream)
        kinds = Counter((c.predicted, c.observed, c.decided_by) for _, c in rows if not c.agrees)
        for (predicted, observed, decided), count in kinds.most_common(40):
            m, c = next((m, c) for m, c in rows if not c.agrees and (c.predicted, c.observed, c.decided_by)
                        == (predicted, observed, decided))
            print(f"  x{count:<4} predicted {predicted} ({decided}), observed {observed}: {m.id} :: "
                  f"{c.detail[:160]}", file=stream)
    return 0


_REASONS = {
    ("ok", "breaks"): "the client raises on a value no finding blames on it: the schema finding on the field names no "
                      "client, so the effects table does not say which fields this client dereferences",
    ("ok", "degraded"): "the client returns a value the stream carried in the wrong type or place, which sse-check's "
                        "view of the stream leaves out, and no finding gives this client an effect",
    ("degraded", "ok"): "{code}'s effect on this client is predicted whatever the stream carried: its condition does "
                        "not tell apart the streams where the final result is unchanged",
    ("degraded", "breaks"): "the client raises where {code}'s effect says it only degrades: the condition under which "
                            "it raises (the field's type or value) is not in the effects table",
    ("breaks", "ok"): "{code} is predicted to break this client, which returns the stream's result: the effect's "
                      "condition is wider than what the client checks",
    ("breaks", "degraded"): "{code} is predicted to break this client, which finishes with another result: the "
                            "effect's condition is wider than what the client checks",
}


def known_table(dialects: Sequence[str] = corpus.DIALECTS) -> str:
    """tests/mutant_known.py's KNOWN as it stands today (every disagreement class, its count, its reason)."""
    from mutant_known import disagreement_class

    counts: Counter[tuple[str, ...]] = Counter()
    for (dialect, client), rows in compare_all(dialects).items():
        for _, c in rows:
            if not c.agrees:
                counts[disagreement_class(dialect, client, c)] += 1
    lines = []
    for klass in sorted(counts):
        reason = _REASONS[(klass[2], klass[3])].format(code=klass[4])
        lines.append(f"    {klass!r}:  # {counts[klass]}\n        {reason!r},")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("write", "report", "known"))
    parser.add_argument("--dialect", action="append", choices=corpus.DIALECTS)
    parser.add_argument("--client", action="append", default=[])
    args = parser.parse_args(argv)
    dialects = args.dialect or list(corpus.DIALECTS)
    os.environ.setdefault("NO_PROXY", "*")
    if args.command == "write":
        return write(dialects, args.client)
    if args.command == "known":
        print(known_table(dialects))
        return 0
    return report(dialects)


if __name__ == "__main__":
    raise SystemExit(main())
