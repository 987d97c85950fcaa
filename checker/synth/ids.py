"""Realistic, deterministic ids for synthetic streams: derived from a name, so a stream written twice is the
same bytes, and shaped like the real ones (hex after a prefix, base62 call ids) so no rule mistakes them."""

from __future__ import annotations

import hashlib


def make_id(prefix: str, name: str, length: int = 48) -> str:
    """A realistic, deterministic id: prefix + hex, like OpenAI's `resp_68ee…`."""
    digest = hashlib.sha256(name.encode()).hexdigest()
    return prefix + ("68ee" + digest)[:length]


def make_call_id(name: str) -> str:
    """OpenAI call ids are `call_` + base62; 32 characters here."""
    alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    number = int(hashlib.sha256(("call" + name).encode()).hexdigest(), 16)
    chars = []
    for _ in range(32):
        number, rem = divmod(number, 62)
        chars.append(alphabet[rem])
    return "call_" + "".join(chars)


def numbered_id(prefix: str, n: int) -> str:
    """The ``n``th id of a kind: random-looking but reproducible, like real ids (no long digit runs)."""
    return prefix + hashlib.blake2b(f"{prefix}{n}".encode(), digest_size=16).hexdigest()
