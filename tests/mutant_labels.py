"""Labels of the mutant corpus: what each real client did with each mutant, and how that compares to sse-check.

``python tests/mutant_labels.py write`` (``make mutant-labels``) builds the mutants of ``tests/mutant_corpus.py``
from their seed, runs every real client that is installed here on every mutant of its dialect, and writes one
JSON lines file per dialect and client, ``tests/mutant_labels/<dialect>.<client>.jsonl``: per mutant its id and
the client's normalised outcome (raised or not, in the client's own words; the final items or completion: text,
tool calls with arguments, status or finish reason). ``tests/mutant_labels/manifest.json`` records the seed,
the corpus digest per dialect and each client's version. The runs are batched: the in-process clients
(openai-python, anthropic-python) are called in one interpreter, the Node clients (openai-node, @anthropic-ai/sdk)
read a whole batch of mutant files in one process.

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
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
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
# The clients of each dialect that have an oracle here (until the client registry of checker/oracles lands,
# this names the existing oracles; a client registered there is picked up from it, see _registered).
LEGACY: dict[str, tuple[str, ...]] = {
    "responses": ("openai-python", "openai-node"),
    "chat": ("openai-python", "openai-node"),
    "messages": ("anthropic-python", "anthropic-ts"),
}
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


@functools.cache
def _declaration(source: str) -> Any:
    from test_corpus import declaration

    return declaration(corpus.CAPTURES / source)


def _request(m: Mutant) -> dict[str, Any] | None:
    return _declaration(m.source).request


def _safe(run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The oracle's outcome; where the oracle itself fails (not the client: an oracle never raises for what the
    client does), that failure, kept as such and left out of every comparison."""
    try:
        return run()
    except Exception as exc:  # noqa: BLE001 - the oracle's own bug, recorded rather than fatal to the batch
        return {"oracle_failed": f"{type(exc).__name__}: {exc}"}


def _strip(raw: dict[str, Any]) -> dict[str, Any]:
    """An oracle's outcome without what is the same for every run (client, version, mode) or says nothing of
    the result (how many events it read)."""
    return {k: v for k, v in raw.items() if k not in ("client", "version", "mode", "events", "chunks")}


def _write_files(folder: Path, items: Sequence[Mutant], with_request: bool) -> list[Path]:
    paths = []
    for n, m in enumerate(items):
        path = folder / f"m{n:05d}.sse"
        path.write_bytes(m.data)
        request = _request(m) if with_request else None
        if request is not None:
            path.with_name(path.stem + ".request.json").write_text(json.dumps(request))
        paths.append(path)
    return paths


def _run_openai_python(dialect: str, items: Sequence[Mutant]) -> tuple[str, list[dict[str, Any]]]:
    import openai

    if dialect == "responses":
        from checker.oracles.openai_python import run

        outs = [_safe(lambda m=m: run(m.data, mode="client").as_dict()) for m in items]
    else:
        from checker.oracles.openai_python_chat import run as run_chat

        def chat(m: Mutant) -> dict[str, Any]:
            o = run_chat(m.data, request=_request(m))
            return {"raised": o.raised, "completion": o.completion}

        outs = [_safe(lambda m=m: chat(m)) for m in items]
    return openai.__version__, [_strip(o) for o in outs]


@contextmanager
def _serve_many(bodies: Sequence[bytes]) -> Iterator[str]:
    """ONE loopback server for a whole batch: body k answers every request under ``/c/k/`` (200
    text/event-stream, then the connection is closed, as a server ends a stream); yields the base URL."""
    import socket

    from checker.oracles.loopback import serve_connections

    def answer(conn: socket.socket) -> None:
        with conn:
            conn.settimeout(10)
            request = b""
            try:
                while b"\r\n\r\n" not in request:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    request += chunk
                head, _, rest = request.partition(b"\r\n\r\n")
                target = head.split(b" ", 2)[1].decode()
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip() or 0)
                while len(rest) < length:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    rest += chunk
                parts = target.split("/")
                body = bodies[int(parts[2])] if len(parts) > 2 and parts[1] == "c" and parts[2].isdigit() else b""
                conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
                             b"connection: close\r\n\r\n" + body)
            except (OSError, ValueError, IndexError):
                return

    with serve_connections(answer) as url:
        yield url


def _run_anthropic_python(dialect: str, items: Sequence[Mutant]) -> tuple[str, list[dict[str, Any]]]:
    import warnings

    import anthropic

    from checker.oracles.anthropic_python import _run_stream

    outs = []
    with warnings.catch_warnings(), _serve_many([m.data for m in items]) as url:
        warnings.simplefilter("ignore")
        # One client (one connection pool) for the batch; each mutant under its own base URL.
        base = anthropic.Anthropic(api_key="sk-ant-oracle", base_url=url, max_retries=0, timeout=30)
        try:
            for k in range(len(items)):
                client = base.with_options(base_url=f"{url}/c/{k}")
                outs.append(_strip(_safe(lambda c=client: _run_stream(anthropic, c).as_dict())))
        finally:
            base.close()
    return anthropic.__version__, outs


def _run_node(dialect: str, items: Sequence[Mutant], anthropic: bool) -> tuple[str, list[dict[str, Any]]]:
    import node_oracle

    source = node_oracle.ANTHROPIC if anthropic else node_oracle.SOURCE
    target = node_oracle.ensure_installed(source)
    outs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="sse-check-mutants-") as tmp:
        for start in range(0, len(items), BATCH):
            batch = items[start:start + BATCH]
            for old in Path(tmp).iterdir():
                old.unlink()
            paths = _write_files(Path(tmp), batch, with_request=dialect == "responses")
            if dialect == "chat":
                raws = node_oracle.run_chat([(p, _request(m)) for p, m in zip(paths, batch, strict=True)], target)
                outs += [{"raised": r.get("raised"), "completion": _view(r.get("completion"))} for r in raws]
            else:
                outs += [_strip(r) for r in node_oracle.run(paths, target)]
    lock = json.loads((source / "package-lock.json").read_text())
    package = "@anthropic-ai/sdk" if anthropic else "openai"
    return lock["packages"][f"node_modules/{package}"]["version"], outs


def _view(completion: Any) -> Any:
    from checker.oracles.chat import completion_view

    return completion_view(completion) if isinstance(completion, dict) else None


RUNNERS: dict[str, Callable[[str, Sequence[Mutant]], tuple[str, list[dict[str, Any]]]]] = {
    "openai-python": _run_openai_python,
    "anthropic-python": _run_anthropic_python,
    "openai-node": lambda d, items: _run_node(d, items, anthropic=False),
    "anthropic-ts": lambda d, items: _run_node(d, items, anthropic=True),
}


def available(client: str) -> str | None:
    """Why ``client`` cannot run here, or None."""
    import importlib.util

    import node_oracle

    if client == "openai-python":
        return None if importlib.util.find_spec("openai") else "the openai package is not installed"
    if client == "anthropic-python":
        return None if importlib.util.find_spec("anthropic") else "the anthropic package is not installed"
    try:
        node_oracle.ensure_installed(node_oracle.ANTHROPIC if client == "anthropic-ts" else node_oracle.SOURCE)
    except node_oracle.NodeOracleUnavailable as exc:
        return str(exc)
    return None


def clients(dialect: str) -> tuple[str, ...]:
    return LEGACY[dialect]


def run_client(client: str, dialect: str, items: Sequence[Mutant]) -> tuple[str, list[dict[str, Any]]]:
    """(version, the normalised outcome of each mutant, in order)."""
    return RUNNERS[client](dialect, items)


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
    manifest = read_manifest() or {"seed": corpus.SEED, "dialects": {}, "clients": {}}
    manifest["seed"] = corpus.SEED
    for dialect in dialects:
        items = corpus.mutants(dialect)
        manifest["dialects"][dialect] = {"mutants": len(items), "digest": corpus.digest(items),
                                         "sources": len(corpus.sources(dialect))}
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
            manifest["clients"][f"{dialect}.{client}"] = {"version": version, "labels": len(lines)}
            print(f"{dialect} {client} {version}: {len(lines)} labels", file=sys.stderr)
    MANIFEST.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return 0


# --- what a label says, and what sse-check predicts --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Compared:
    """One client on one mutant: the predicted verdict, the observed one, whether they agree, and why not."""

    predicted: str
    observed: str
    agrees: bool
    decided_by: str
    detail: str


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
