"""``--oracle``: the real clients run on linted captures, each outcome set beside the matrix's prediction.

``chosen(spec)`` reads the option (``all``, or client names separated by commas) against the registry
(``checker.oracles.registry``); ``run_on(clients, captures)`` runs each chosen client once per batch of captures
(one loopback server and one driver process per batch: ``checker.oracles.runner.run_batch``) on the captures
of the dialects it speaks, and gives, per capture, one :class:`~checker.oracles.agreement.Comparison` per
client. With ``all``, a client that is not installed here is left out and said so once (:func:`missing`); a
client named on the command line that is not installed is a usage error before any work.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from checker.compat import matrix
from checker.engine import LintResult, StreamLinter
from checker.oracles import registry
from checker.oracles.agreement import Agreement, Carried, Comparison, carried, compare
from checker.oracles.protocol import Exchange, Job, Outcome
from checker.oracles.runner import ClientUnavailable, job_for, run_batch, tool_names

ALL = "all"


@dataclass(frozen=True, slots=True)
class OracleCapture:
    """One linted capture to run the clients on: its name, its file (None for stdin or a URL), its bytes."""

    name: str
    path: Path | None
    body: bytes
    result: LintResult


def chosen(spec: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The clients ``--oracle SPEC`` asks for, and those of them left out because they are not installed here
    (only with ``all``). ValueError (one line) for an unknown name, or a named client that cannot run here."""
    if spec.strip().lower() == ALL:
        names = registry.names()
        runnable = tuple(n for n in names if registry.unavailable(registry.get(n)) is None)
        return runnable, tuple(n for n in names if n not in runnable)
    names = [part.strip() for part in spec.split(",") if part.strip()]
    if not names:
        raise ValueError(f"--oracle: give a client or {ALL!r}")
    known = registry.names()
    for name in names:
        if name not in known:
            raise ValueError(f"--oracle: unknown client {name!r} (choose from {ALL}, {', '.join(known)})")
        why = registry.unavailable(registry.get(name))
        if why is not None:
            raise ValueError(f"--oracle {name}: {why}")
    return tuple(dict.fromkeys(names)), ()


def missing(left_out: Sequence[str]) -> str | None:
    """The one line that says which clients ``--oracle all`` could not run here, and how to install them."""
    if not left_out:
        return None
    return "--oracle all: not installed here, so not run: " + "; ".join(
        f"{n} ({registry.get(n).install})" for n in left_out)


def run_on(clients: Sequence[str], captures: Sequence[OracleCapture],
           timeout_s: float | None = None) -> list[dict[str, Comparison]]:
    """Per capture (in order), each chosen client's run beside its prediction; a client that does not speak a
    capture's dialect, or has no column in its matrix, is not run on it."""
    out: list[dict[str, Comparison]] = [{} for _ in captures]
    matrices = [matrix(c.result) for c in captures]
    for client in clients:
        speaks = registry.get(client).dialects
        mine = [i for i, c in enumerate(captures) if (c.result.dialect or "responses") in speaks
                and any(cell.client == client for cell in matrices[i].cells)]
        if not mine:
            continue
        jobs = [_job(captures[i], timeout_s) for i in mine]
        try:
            outcomes = run_batch(client, jobs)
        except ClientUnavailable as exc:  # uninstalled since chosen(): every capture says so
            outcomes = [Outcome(client=client, version=registry.get(client).version, failure=str(exc))] * len(jobs)
        for i, outcome in zip(mine, outcomes, strict=True):
            capture = captures[i]
            out[i][client] = compare(client, matrices[i][client].verdict, outcome, _carried(capture),
                                     capture.result)
    return out


def counts(comparisons: Sequence[dict[str, Comparison]]) -> dict[Agreement, int]:
    """How many runs agreed, differed, stayed unconfirmed or could not be made."""
    tally = dict.fromkeys(Agreement, 0)
    for per_client in comparisons:
        for comparison in per_client.values():
            tally[comparison.agreement] += 1
    return tally


def _job(capture: OracleCapture, timeout_s: float | None) -> Job:
    dialect = capture.result.dialect or "responses"
    if capture.path is not None:
        return job_for(capture.path, dialect, body=capture.body, timeout_s=timeout_s)
    job = Job(exchange=Exchange(body=capture.body), dialect=dialect, tools=tool_names({}, capture.body, dialect),
              name=capture.name)
    return job if timeout_s is None else dataclasses.replace(job, timeout_s=timeout_s)


def _carried(capture: OracleCapture) -> Carried:
    # What a client that reads the stream right returns: the stream linted once more, keeping its texts (the
    # lint proper releases them to bound memory; only a run with --oracle pays for this).
    linter = StreamLinter(dialect=capture.result.dialect or None, keep_texts=True)
    linter.feed(capture.body)
    return carried(linter.close().texts or [])
