"""Text accumulated from deltas, with bounded memory, and readable differences.

Reconciliation compares the concatenated deltas with the text of a ``.done``
event, a part, an item and the final response. Holding every byte of every
open item would make memory grow with the capture, so an accumulator keeps the
text itself only up to ``KEEP_CHARS`` and a running digest beyond; equality is
decided by length and digest, and a difference is shown from the kept text.
"""

from __future__ import annotations

try:  # hashlib's blake2b itself, without hashlib's start-up cost (it loads OpenSSL for the other digests)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b

# Enough to show any realistic difference in full and to keep ordinary items
# exact; beyond it, only a digest grows with the text.
KEEP_CHARS = 1 << 20


class TextAccumulator:
    __slots__ = ("_pieces", "_size", "_digest", "_kept")

    def __init__(self, initial: str = "") -> None:
        self._pieces: list[str] = [initial] if initial else []
        self._size = len(initial)
        self._digest: "blake2b | None" = None
        self._kept = ""

    def append(self, piece: str) -> None:
        self._size += len(piece)
        if self._digest is None:
            self._pieces.append(piece)
            if self._size > KEEP_CHARS:
                text = "".join(self._pieces)
                self._kept = text[:KEEP_CHARS]
                self._digest = hash_text(blake2b(digest_size=16), text)
                self._pieces = []
        else:
            hash_text(self._digest, piece)

    def compacted(self) -> "TextAccumulator":
        """The same text as one string (a list of many small deltas costs far more)."""
        if self._digest is not None:
            return self
        self.text()
        return self

    def __len__(self) -> int:
        return self._size

    @property
    def exact(self) -> bool:
        return self._digest is None

    def text(self) -> str:
        """The text (or its first KEEP_CHARS characters once it grew beyond)."""
        if self._digest is not None:
            return self._kept
        if len(self._pieces) > 1:
            self._pieces = ["".join(self._pieces)]
        return self._pieces[0] if self._pieces else ""

    def equals(self, other: str) -> bool:
        if len(other) != self._size:
            return False
        if self._digest is None:
            return self.text() == other
        return hash_text(blake2b(digest_size=16), other).digest() == self._digest.digest()


# A long text is hashed in slices of this many characters: the digest of its UTF-8 is the same as if it were
# encoded whole (UTF-8 encodes each character on its own), without a bytes copy as large as the text.
HASH_SLICE = 1 << 16


def hash_text(digest: blake2b, text: str) -> blake2b:
    """``digest`` updated with ``text``'s UTF-8 (lone surrogates passed through); returns ``digest``."""
    if len(text) <= HASH_SLICE:
        digest.update(text.encode("utf-8", "surrogatepass"))
        return digest
    for start in range(0, len(text), HASH_SLICE):
        digest.update(text[start : start + HASH_SLICE].encode("utf-8", "surrogatepass"))
    return digest


def describe_difference(expected: str, actual: str, *, context: int = 20) -> str:
    """One line saying where two texts first differ."""
    if expected == actual:
        return "identical"
    limit = min(len(expected), len(actual))
    i = 0
    while i < limit and expected[i] == actual[i]:
        i += 1
    if i == limit:
        if len(actual) > len(expected):
            return f"{len(actual) - len(expected)} extra character(s) at {i}: {_clip(actual[i:], context)!r}"
        return f"{len(expected) - len(actual)} character(s) missing at {i}: {_clip(expected[i:], context)!r}"
    return (
        f"first difference at character {i}: expected {_clip(expected[i:], context)!r}, "
        f"got {_clip(actual[i:], context)!r}"
    )


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n] + "…"
