"""Input forms: the requests every Responses client may send beyond one user message (rules INP,
checker/rules/inputs.py).

One flow per form, each one streamed request on ``/v1/responses`` (every stream check applies to its answer) and
its own capability row:

* ``system_message``: a ``system`` and a ``developer`` message before the user's (Open Responses' message roles);
* ``assistant_history``: an earlier turn sent back: the assistant's answer once as plain text (the
  ``EasyInputMessage`` form) and once as ``output_text`` parts (what a client got back and returns as it is);
* ``image_input``: an ``input_image`` part holding a data URL;
* ``file_input``: an ``input_file`` part holding base64 ``file_data`` and its ``filename``;
* ``hosted_web_search``: the hosted ``web_search`` tool, offline (``external_web_access: false``), forced.

The first two are forms a server must take (refused: INP001, broken); images, files and a hosted tool depend on
the model and the server, so their step is a *gate*: a 404/405/501 or a 4xx (or 500) error saying "not
supported" makes the row unsupported, one line. A forced hosted tool that is answered must be a call of its
item type (INP002). (A function forced by name is checked by the tool_choice flows: checker/surface/tool_choice.py.)
"""

from __future__ import annotations

import base64
import struct
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

from checker.live.scenarios import MAX_OUTPUT_TOKENS
from checker.rules import inputs as rules
from checker.surface.capability import Feature, register
from checker.surface.flow import Flow, Step
from checker.surface.record import START, FlowRecord, StepFinding

API = "responses"
STEP = "answer"


def _png_2x2() -> str:
    """A 2×2 red PNG as a data URL (built here rather than stored: small, and readable as what it is)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    pixels = b"".join(b"\x00" + b"\xff\x00\x00" * 2 for _ in range(2))
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(pixels)) + chunk(b"IEND", b""))
    return "data:image/png;base64," + base64.b64encode(png).decode()


def _pdf_one_line() -> str:
    """A one-page PDF whose only text is its title, as a data URL (with a valid cross-reference table)."""
    text = b"BT /F1 12 Tf 20 50 Td (Title: sse-check file input) Tj ET"
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R "
               b"/Resources << /Font << /F1 5 0 R >> >> >>",
               b"<< /Length %d >>\nstream\n%s\nendstream" % (len(text), text),
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    out, offsets = b"%PDF-1.4\n", []
    for number, obj in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, obj)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return "data:application/pdf;base64," + base64.b64encode(out).decode()


def _message(role: str, content: Any) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": content}


# name: (title, form words for the findings, gate, input, extra body fields)
FORMS: dict[str, tuple[str, str, bool, list[dict[str, Any]], dict[str, Any]]] = {
    "system_message": (
        "system and developer messages in input", "system and developer messages", False,
        [_message("system", "You answer in one short sentence."),
         _message("developer", "Do not use lists."), _message("user", "Say hello.")], {}),
    "assistant_history": (
        "an earlier assistant turn in input", "an earlier assistant turn (text and output_text parts)", False,
        [_message("user", "My name is Alice."), _message("assistant", "Hello Alice!"),
         _message("user", "Where do I live?"),
         _message("assistant", [{"type": "output_text", "text": "You did not say.", "annotations": []}]),
         _message("user", "What is my name?")], {}),
    "image_input": (
        "input_image (a data URL)", "an input_image part", True,
        [_message("user", [{"type": "input_text", "text": "What colour is this image? One word."},
                           {"type": "input_image", "image_url": _png_2x2(), "detail": "auto"}])], {}),
    "file_input": (
        "input_file (base64 file_data)", "an input_file part", True,
        [_message("user", [{"type": "input_text", "text": "Answer with the attached file's title only."},
                           {"type": "input_file", "filename": "sse-check.pdf", "file_data": _pdf_one_line()}])], {}),
    "hosted_web_search": (
        "hosted web_search tool (offline)", "the hosted web_search tool", True,
        [_message("user", "Find the most relevant cached result for sse-check.")],
        {"tools": [{"type": "web_search", "external_web_access": False}], "tool_choice": {"type": "web_search"},
         "include": ["web_search_call.action.sources"]}),
}
# A forced hosted tool, and the output item type its call has.
HOSTED_ITEMS = {"web_search": "web_search_call", "file_search": "file_search_call"}


def feature_name(flow: str) -> str:
    return f"inputs.{flow}"


def flow_for(name: str) -> Flow:
    title, words, gate, items, extra = FORMS[name]
    body = {"input": items, "max_output_tokens": MAX_OUTPUT_TOKENS, **extra}
    details: dict[str, Any] = {"form": words}
    hosted = extra.get("tool_choice", {}).get("type") if isinstance(extra.get("tool_choice"), dict) else None
    if hosted in HOSTED_ITEMS:
        details["hosted"] = {"tool": hosted, "item": HOSTED_ITEMS[hosted]}
    steps = (Step(name=STEP, api=API, body=body, expect="stream", gate=gate, summary=f"a request with {words}"),)
    return Flow(name=name, feature=feature_name(name), api=API, summary=f"input forms: {title}", steps=steps,
                details=details)


def flows(apis: Sequence[str]) -> list[Flow]:
    return [flow_for(name) for name in FORMS] if API in apis else []


def judge(record: FlowRecord) -> list[StepFinding]:
    """INP001 on a refused form that a server must take, INP002 on a forced hosted tool not called."""
    hosted = record.details.get("hosted")
    step = record.step(STEP)
    if isinstance(hosted, Mapping):
        return _judge_hosted(step, hosted)
    if step is None or step.status is None or step.ok or _GATED.get(record.flow, False):
        return []  # a gated form refused otherwise than "not supported": the step's own HTTP finding says so
    return [(STEP, rules.INPUT_FORM_REFUSED.finding(
        START, form=str(record.details.get("form") or "this input"), status=step.status,
        message=step.error_text))]


def _judge_hosted(step: Any, hosted: Mapping[str, Any]) -> list[StepFinding]:
    if step is None or not step.ok:
        return []  # declined (unsupported at the gate), or an error the step's own finding reports
    output = step.answer.get("output") if isinstance(step.answer, Mapping) else None
    item = str(hosted.get("item"))
    if any(isinstance(o, Mapping) and o.get("type") == item for o in (output if isinstance(output, list) else [])):
        return []
    return [(STEP, rules.HOSTED_TOOL_IGNORED.finding(START, tool=str(hosted.get("tool")), item=item))]


_GATED = {name: gate for name, (_, _, gate, _, _) in FORMS.items()}
for _name, (_title, *_rest) in FORMS.items():
    register(Feature(name=feature_name(_name), title=_title, families=("INP",), judge=judge))
