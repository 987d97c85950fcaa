"""The Python API for other engines: one capture in, one report record out.

:func:`lint_path` and :func:`lint_bytes` return the same dict as one entry of the JSON report's ``files[]``
(docs/report-schema.md): plain JSON types, so Spark, Ray, Beam or a thread pool can map them over an
archive's files and gather the records anywhere. ``sse-check lint -j``/``--dask`` run exactly this per
capture (checker.lint_job).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from checker.engine import EngineOptions, Limits
from checker.errors import UsageError
from checker.findings import Severity


def _options(profile: str, select: Iterable[str] | None, ignore: Iterable[str] | None,
             limits: Limits | None) -> EngineOptions:
    from checker.profiles import get_profile
    from checker.rules import RULES

    def codes(values: Iterable[str] | None) -> tuple[str, ...] | None:
        if values is None:
            return None
        chosen = [c for v in values for c in RULES if c.startswith(v.upper()) or RULES[c].name == v]
        unknown = [v for v in values if not any(c.startswith(v.upper()) or RULES[c].name == v for c in RULES)]
        if unknown:
            raise ValueError(f"select/ignore: {', '.join(map(repr, unknown))} match no rule")
        return tuple(chosen)

    return EngineOptions(profile=get_profile(profile), select=codes(select), ignore=codes(ignore),
                         limits=limits or Limits())


def _record(name: str, result: Any, fail_on: str, clients: bool) -> dict[str, Any]:
    from checker.report import ReportOptions
    from checker.report.json_report import file_entry

    options = ReportOptions(command="lint", profile=result.profile, fail_on=Severity.parse(fail_on),
                            clients=clients)
    return file_entry(name, result, options)


def lint_bytes(data: bytes, *, profile: str = "openai", request: dict[str, Any] | None = None,
               meta: dict[str, Any] | None = None, name: str = "<bytes>", select: Iterable[str] | None = None,
               ignore: Iterable[str] | None = None, fail_on: str = "warning", clients: bool = False,
               limits: Limits | None = None) -> dict[str, Any]:
    """Lint one whole capture held in memory; ``request`` is its request body (X.request.json), ``meta`` a
    probe's recorded exchange (X.meta.json). Returns the JSON report's ``files[]`` entry for it."""
    from checker.lint_job import make_linter

    linter = make_linter(request if request is not None else _meta_request(meta), meta,
                         _options(profile, select, ignore, limits))
    linter.feed(bytes(data))
    return _record(name, linter.close(), fail_on, clients)


def lint_path(path_or_url: str | Path, *, profile: str = "openai", request: dict[str, Any] | None = None,
              select: Iterable[str] | None = None, ignore: Iterable[str] | None = None,
              fail_on: str = "warning", clients: bool = False, limits: Limits | None = None) -> dict[str, Any]:
    """Lint one capture file or URL (``.sse``, ``.sse.gz``, ``.sse.zst``; ``s3://``... with the archive
    extra), with its sidecars beside it unless ``request`` is given. Returns its ``files[]`` entry; a capture
    that cannot be read raises :class:`OSError` (one line: what and why)."""
    from checker.lint_job import Job, run_job

    job = Job(path_or_url if isinstance(path_or_url, Path) else str(path_or_url),
              _options(profile, select, ignore, limits), request, request is not None)
    done = run_job(job)
    if done.result is None:
        raise OSError(done.error)
    return _record(done.name, done.result, fail_on, clients)


def _meta_request(meta: dict[str, Any] | None) -> dict[str, Any] | None:
    request = meta.get("request") if isinstance(meta, dict) else None
    return request if isinstance(request, dict) else None


__all__ = ["lint_bytes", "lint_path", "UsageError"]
