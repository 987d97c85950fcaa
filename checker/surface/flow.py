"""Flows as data: named sequences of requests, where a later step's path and body use earlier steps' answers.

A :class:`Flow` is a list of :class:`Step`\\ s. Each step is one HTTP request (``POST``, ``GET`` or
``DELETE``) to a path beside the probe's base URL (``/models``, ``/responses/{create.id}``) or, with no
path, to its dialect's endpoint (``api``), and says what a conforming server answers:

* ``stream``: a 2xx event stream, linted by the engine exactly as a scenario's (every stream check);
* ``nonstream``: a 2xx JSON answer of its dialect (``stream: false``), judged as a scenario's;
* ``error``: an HTTP error with a JSON error body (or a stream ending in failure);
* ``json``: a 2xx JSON answer of an endpoint that is no dialect's (``GET /v1/models``), whose body the
  feature's own rules judge.

References
----------
A string in a step's ``path`` or ``body`` may name an earlier step's answer: ``{create.id}``,
``{call.output[0].call_id}``, ``{call.output[type=function_call].call_id}`` (the first element whose ``type``
is ``function_call``), ``{call.output[-1]}`` (the last). ``{model}`` is the model under test. A string that is
one reference and nothing else becomes the referenced JSON value itself (a list, an object, a number); a
reference inside a longer string is written as text (JSON for what is not a string). Braces that do not
name ``model`` or an earlier step (``{"city": "Paris"}`` in a tool's arguments) are kept as they are.

A step's *answer* is its JSON body (``json``, ``nonstream``, ``error``), or for a stream what its dialect's
request adapter accumulates: ``{"id": …, "output": [...]}`` (Responses: the output items; chat: one
assistant message with its ``tool_calls``; Messages: one assistant message with its content blocks).

Sans-I/O: nothing here sends a request (that is :mod:`checker.surface.run`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import quote

StepExpect = Literal["stream", "nonstream", "error", "json"]
STEP_EXPECTS: tuple[str, ...] = ("stream", "nonstream", "error", "json")
METHODS: tuple[str, ...] = ("POST", "GET", "DELETE")

# A reference: a name, then .field, [N] or [key=value] selectors.
REFERENCE = re.compile(r"\{([A-Za-z_][\w-]*)((?:\.[A-Za-z_][\w-]*|\[-?\d+\]|\[[A-Za-z_][\w-]*=[^\]]*\])*)\}")
_SELECTOR = re.compile(r"\.([A-Za-z_][\w-]*)|\[(-?\d+)\]|\[([A-Za-z_][\w-]*)=([^\]]*)\]")
MODEL_NAME = "model"


class UnresolvedReference(LookupError):
    """A reference that names nothing in the answer it points into (the step cannot be built)."""

    def __init__(self, reference: str, detail: str, source: str) -> None:
        super().__init__(f"{reference}: {detail}")
        self.reference, self.detail, self.source = reference, detail, source  # source: the step referred to


# The answers of the steps run so far, by step name; ``model`` is the model under test.
Answers = Mapping[str, Any]
# A built-in flow's body may be computed from the earlier answers (through a request adapter) instead of a
# template: it raises UnresolvedReference when what it needs is not there.
BodyBuilder = Callable[[Answers], Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    name: str
    method: str = "POST"
    path: str | None = None  # beside the base URL ("/models"); None: the endpoint of ``api``
    api: str | None = None  # the dialect of a POST to its endpoint (adapter name)
    body: Any = None  # a template (see References) or a BodyBuilder; None: no body
    expect: StepExpect = "stream"
    summary: str = ""
    replay: tuple[str, ...] = ()  # capture names a replay server may know this step by
    headers: tuple[tuple[str, str], ...] = ()
    # A step that finds out whether the server offers the feature at all: 404, 405 or 501 (or an error saying
    # the feature is not supported) here makes the feature "unsupported" and ends the flow, with no finding.
    gate: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Flow:
    name: str  # unique in a run; a step is known as "<flow>.<step>" (saved as <flow>.<step>.sse)
    feature: str  # the capability row it decides (checker.surface.capability)
    summary: str
    steps: tuple[Step, ...]
    api: str | None = None  # the dialect it is written in, if one
    source: str = "built-in"
    details: Mapping[str, Any] = field(default_factory=dict)  # what the judge needs to know (the ids sent)
    # A flow that is no sequence of template steps (stored responses: every answer kept whole, polling until a
    # status settles) runs itself: ``await runner(client, config, context)`` gives its FlowRuns (checker.surface.run).
    runner: Callable[..., Awaitable[list[Any]]] | None = None

    def step_id(self, step: Step) -> str:
        return f"{self.name}.{step.name}"


# --- references --------------------------------------------------------------------------------------


def lookup(answers: Answers, name: str, selectors: str) -> Any:
    """The value a reference names (raises :class:`UnresolvedReference`)."""
    shown = "{" + name + selectors + "}"
    if name not in answers:
        raise UnresolvedReference(shown, f"no earlier step {name!r}", name)
    value = answers[name]
    for match in _SELECTOR.finditer(selectors):
        key, index, field_name, wanted = match.groups()
        if key is not None:
            if not isinstance(value, Mapping) or value.get(key) is None:
                raise UnresolvedReference(shown, f"{name}'s answer has no {key!r} here", name)
            value = value[key]
        elif index is not None:
            if not isinstance(value, list) or not -len(value) <= int(index) < len(value):
                raise UnresolvedReference(shown, f"{name}'s answer has no element [{index}] here", name)
            value = value[int(index)]
        else:
            found = [v for v in value if isinstance(v, Mapping) and str(v.get(field_name)) == wanted] \
                if isinstance(value, list) else []
            if not found:
                raise UnresolvedReference(shown, f"{name}'s answer has no element with {field_name} {wanted!r}", name)
            value = found[0]
    return value


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def resolve(template: Any, answers: Answers) -> Any:
    """The template with its references replaced (raises :class:`UnresolvedReference`)."""
    if isinstance(template, str):
        whole = REFERENCE.fullmatch(template)
        if whole is not None and whole.group(1) in answers:
            return lookup(answers, whole.group(1), whole.group(2))
        return REFERENCE.sub(lambda m: _text(lookup(answers, m.group(1), m.group(2)))
                             if m.group(1) in answers else m.group(0), template)
    if isinstance(template, Mapping):
        return {str(k): resolve(v, answers) for k, v in template.items()}
    if isinstance(template, list):
        return [resolve(v, answers) for v in template]
    return template


def references(template: Any) -> list[str]:
    """The step names a template refers to (for checking a flow file before it runs)."""
    if isinstance(template, str):
        return [m.group(1) for m in REFERENCE.finditer(template)]
    if isinstance(template, Mapping):
        return [name for v in template.values() for name in references(v)]
    if isinstance(template, list):
        return [name for v in template for name in references(v)]
    return []


def step_body(step: Step, answers: Answers) -> Any:
    """The body of ``step`` given the earlier answers (raises :class:`UnresolvedReference`)."""
    if step.body is None:
        return None
    if callable(step.body):
        return step.body(answers)
    return resolve(step.body, answers)


def step_path(step: Step, answers: Answers) -> str | None:
    """The path of ``step`` with its references filled in (URL-quoted), or None for its dialect's endpoint."""
    if step.path is None:
        return None
    return REFERENCE.sub(lambda m: quote(_text(lookup(answers, m.group(1), m.group(2))), safe="")
                         if m.group(1) in answers else m.group(0), step.path)
