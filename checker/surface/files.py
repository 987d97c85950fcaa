"""Flows in ``--scenario-file`` documents (JSON or YAML): several requests, later ones using earlier answers.

A scenario file whose document has ``steps`` is a flow (any other is one scenario: checker.live.scenarios)::

    {"flow": "fetch_created", "summary": "...", "feature": "stored", "api": "responses",
     "steps": [
       {"name": "create", "body": {"input": "hi", "store": true}, "expect": "stream", "gate": true},
       {"name": "fetch", "method": "GET", "path": "/responses/{create.id}", "expect": "json"},
       {"name": "delete", "method": "DELETE", "path": "/responses/{create.id}", "expect": "json"}]}

``flow`` names it (default: the file stem); ``feature`` names its capability row (default: the flow's name; a
built-in feature's name, ``models`` or ``tool_turn.chat``, also applies that feature's rules to the record);
``api`` is the dialect of the steps that have no ``path`` (default: what the first body shows). A step has a
``name`` (letters, digits, ``_`` and ``-``), a ``method`` (``POST``, the default, ``GET``, ``DELETE``), a
``path`` beside the base URL or an ``api`` (its dialect's endpoint), a ``body`` (POST only), ``expect``
(``stream``, the default for a POST, ``nonstream``, ``error``, ``json``, the default otherwise), and optionally
``gate``, ``summary``, ``replay`` and ``headers``. References (``{create.id}``) are described in
checker.surface.flow; one to a step that does not come earlier is an error when the file is read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from checker.errors import UsageError
from checker.live import adapters
from checker.live.scenarios import SCENARIO_SUFFIXES, load_document, qualified
from checker.surface.flow import METHODS, MODEL_NAME, STEP_EXPECTS, Flow, Step, references

FLOW_KEYS = {"flow", "summary", "feature", "api", "steps"}
STEP_KEYS = {"name", "method", "path", "api", "body", "expect", "gate", "summary", "replay", "headers"}
_NAME = re.compile(r"[A-Za-z_][\w-]*")


def is_flow_document(document: Any) -> bool:
    return isinstance(document, Mapping) and isinstance(document.get("steps"), list)


def flow_from_document(stem: str, document: Mapping[str, Any], *, source: str) -> Flow:
    """One flow from a parsed file (a UsageError naming the file and the step for what is wrong)."""
    unknown = set(document) - FLOW_KEYS
    if unknown:
        raise UsageError(f"{source}: unknown keys {sorted(unknown)} (a flow has {sorted(FLOW_KEYS)})")
    name = str(document.get("flow") or stem)
    if not _NAME.fullmatch(name):
        raise UsageError(f"{source}: {name!r} cannot be a flow name (letters, digits, _ and -)")
    api = _api(document.get("api"), source) if document.get("api") is not None else None
    raw = document["steps"]
    if not raw:
        raise UsageError(f"{source}: a flow has at least one step")
    if api is None:
        first = next((s.get("body") for s in raw if isinstance(s, Mapping) and isinstance(s.get("body"), dict)), None)
        api = adapters.for_request(first).name if first is not None else None
    steps: list[Step] = []
    for index, item in enumerate(raw):
        steps.append(_step(item, index, api, [s.name for s in steps], source))
    flow_name = qualified(api, name) if api is not None else name
    return Flow(name=flow_name, feature=str(document.get("feature") or name), api=api, source=source,
                summary=str(document.get("summary") or f"from {source}"), steps=tuple(steps))


def _api(value: Any, where: str) -> str:
    try:
        return adapters.get(str(value)).name
    except ValueError:
        raise UsageError(f"{where}: api must be one of {', '.join(adapters.names())}, not {value!r}") from None


def _step(item: Any, index: int, api: str | None, earlier: list[str], source: str) -> Step:
    where = f"{source}: step {index + 1}"
    if not isinstance(item, Mapping):
        raise UsageError(f"{where}: a step is an object")
    unknown = set(item) - STEP_KEYS
    if unknown:
        raise UsageError(f"{where}: unknown keys {sorted(unknown)} (a step has {sorted(STEP_KEYS)})")
    name = str(item.get("name") or f"step{index + 1}")
    if not _NAME.fullmatch(name) or name == MODEL_NAME or name in earlier:
        raise UsageError(f"{where}: {name!r} cannot be a step name here (unique, letters, digits, _ and -)")
    method = str(item.get("method") or "POST").upper()
    if method not in METHODS:
        raise UsageError(f"{where}: method must be one of {', '.join(METHODS)}, not {method!r}")
    path = item.get("path")
    if path is not None and (not isinstance(path, str) or not path.startswith("/")):
        raise UsageError(f"{where}: path is a string that starts with / (beside the base URL: /models)")
    step_api = _api(item["api"], where) if item.get("api") is not None else (api if path is None else None)
    if path is None and step_api is None:
        raise UsageError(f"{where}: a step needs a path or an api (its dialect's endpoint)")
    body = item.get("body")
    if body is not None and (method != "POST" or not isinstance(body, dict)):
        raise UsageError(f"{where}: only a POST has a body, and it is an object")
    expect = str(item.get("expect") or ("stream" if method == "POST" and step_api else "json"))
    if expect not in STEP_EXPECTS:
        raise UsageError(f"{where}: expect must be one of {', '.join(STEP_EXPECTS)}, not {expect!r}")
    for ref in references(body) + references(path):
        if ref != MODEL_NAME and ref not in earlier:
            raise UsageError(f"{where}: {{{ref}…}} refers to no earlier step (earlier: {', '.join(earlier) or 'none'})")
    return Step(name=name, method=method, path=path, api=step_api, body=body, expect=expect,  # type: ignore[arg-type]
                gate=bool(item.get("gate")), summary=str(item.get("summary") or ""),
                replay=_strings(item.get("replay"), where), headers=_pairs(item.get("headers"), where))


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not all(isinstance(v, str) and v for v in values):
        raise UsageError(f"{where}: replay is a list of capture names")
    return tuple(values)


def _pairs(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, (str, int)) for k, v in
                                                 value.items()):
        raise UsageError(f"{where}: headers is an object of header names and values")
    pairs = tuple((k, str(v)) for k, v in value.items())
    if any(ch in k + v for k, v in pairs for ch in "\r\n\0") or any(":" in k for k, _ in pairs):
        raise UsageError(f"{where}: a header holds a line break or NUL, or a colon in its name")
    return pairs


def _files(paths: Sequence[str | Path]) -> list[Path]:
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(sorted(p for p in path.iterdir() if p.suffix in SCENARIO_SUFFIXES and p.is_file()))
        else:
            files.append(path)
    return files


def split_scenario_files(paths: Sequence[str | Path]) -> tuple[list[Flow], list[Path]]:
    """The flows among ``--scenario-file`` paths (files and directories), and the other files (scenarios)."""
    flows: list[Flow] = []
    others: list[Path] = []
    seen: dict[str, Path] = {}
    for path in _files(paths):
        if not path.is_file() or path.suffix not in SCENARIO_SUFFIXES:
            others.append(path)  # the scenarios' loader says what is wrong with it
            continue
        document = load_document(path)
        if not is_flow_document(document):
            others.append(path)
            continue
        flow = flow_from_document(path.stem, document, source=str(path))
        if flow.name in seen:
            raise UsageError(f"two flows named {flow.name!r}: {seen[flow.name]} and {path}")
        seen[flow.name] = path
        flows.append(flow)
    return flows, others
