"""What an item's final form says: its parts' types and texts, and digests to compare two final forms by.

Done items are kept until the terminal event, their texts need not be: what must agree between an item's
``output_item.done`` and the terminal's ``output`` is kept as a 16-byte digest. Pure functions.
"""

from __future__ import annotations

from typing import Any

from checker.dialects.responses import hosted
from checker.text import HASH_SLICE, blake2b, hash_text


def part_type(part: Any) -> str | None:
    if isinstance(part, dict) and isinstance(part.get("type"), str):
        return part["type"]
    return None


def part_text(part: Any) -> str | None:
    """The text a part carries: `text`, or `refusal` for refusal parts."""
    if not isinstance(part, dict):
        return None
    value = part.get("refusal") if part.get("type") == "refusal" else part.get("text")
    return value if isinstance(value, str) else None


def part_annotations(part: Any) -> list[bytes | str] | None:
    """The annotations a part holds, canonical (None: it has no annotations list to append to)."""
    if isinstance(part, dict) and part.get("type") == "output_text":
        held = part.get("annotations")
        return [hosted.canonical(a) for a in held] if isinstance(held, list) else None
    return []


def fingerprint(item: dict[str, Any]) -> bytes:
    """What must agree between an item's output_item.done and the final output, as a
    digest: done items are kept until the terminal event, their texts need not be."""
    return digest(_identity_and_texts(item))


def digest(value: Any) -> bytes:
    """A 16-byte digest of ``value`` (tuples, lists and scalars), equal for equal values. A long string (an
    item's 18 MB text) is hashed on its own, in slices (checker.text.hash_text), not inside one repr of the
    whole value: that repr and its encoding would cost three times the text, when the terminal event holding
    it is in memory too. Its place in the repr gives its length, so where each long string starts is fixed."""
    long_texts: list[str] = []
    hashed = blake2b(repr(_shape(value, long_texts)).encode("utf-8", "surrogatepass"), digest_size=16)
    for text in long_texts:
        hash_text(hashed, text)
    return hashed.digest()


def _shape(v: Any, long_texts: list[str]) -> Any:
    """``v`` with each long string replaced by its length (the string goes to ``long_texts``). A plain
    function, not a closure: a recursive closure is a reference cycle, which kept the 18 MB text alive
    until the next garbage collection."""
    if type(v) is str and len(v) > HASH_SLICE:
        long_texts.append(v)
        return ("<text>", len(v))
    if type(v) is tuple or type(v) is list:
        return (type(v).__name__, tuple(_shape(x, long_texts) for x in v))
    return v


def _identity_and_texts(item: dict[str, Any]) -> tuple[Any, ...]:
    def texts(key: str) -> tuple[Any, ...]:
        parts = item.get(key)
        if not isinstance(parts, list):
            return ()
        return tuple((part_type(p), part_text(p), hosted.canonical(p.get("annotations")) if isinstance(p, dict)
                      else None) for p in parts)

    return (
        item.get("id"),
        item.get("type"),
        item.get("call_id"),
        item.get("name"),
        item.get("arguments"),
        texts("content"),
        texts("summary"),
        hosted.final_fields(item),
    )


def opaque(item: dict[str, Any]) -> bytes | None:
    """A digest of the item's encrypted reasoning, None without one. OpenAI encrypts it anew for each
    serialisation (captures/real-openai: the same reasoning item's encrypted_content differs between
    output_item.done and response.completed), so two copies can only be compared for presence; that they
    differ is said (LIF020: a check that cannot run), not taken as a changed item."""
    sealed = item.get("encrypted_content")
    if sealed is None:
        return None
    return digest(sealed)


def created_complete(raw: dict[str, Any]) -> bool:
    """An item the server creates already finished: the result of a tool the server ran (program_output, whose
    status cannot be in_progress in openai-python's ProgramOutput; shell_call_output, added completed by
    api.openai.com in captures/real-openai/vercel-openai-shell-skills-1.sse). Such an item has no
    in-progress phase to report."""
    item_type = raw.get("type")
    return raw.get("status") == "completed" and isinstance(item_type, str) and item_type.endswith("_output")


def awaits_program(raw: dict[str, Any]) -> bool:
    """A function call that a program made (programmatic tool calling, `caller: {type: program}`): OpenAI
    finishes its item in_progress by design, the call still waiting for the output the client sends back
    (captures/real-openai/vercel-programmatic-tool-calling-1.sse, -2.sse)."""
    caller = raw.get("caller")
    return raw.get("type") == "function_call" and isinstance(caller, dict) and caller.get("type") == "program"
