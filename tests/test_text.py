"""Bounded text accumulation and difference messages."""

from __future__ import annotations

from checker import text as text_module
from checker.text import TextAccumulator, describe_difference


def test_small_texts_are_exact() -> None:
    acc = TextAccumulator("He")
    for piece in ["l", "lo"]:
        acc.append(piece)
    assert acc.exact and acc.text() == "Hello" and len(acc) == 5
    assert acc.equals("Hello") and not acc.equals("Hellp") and not acc.equals("Hell")


def test_large_texts_are_hashed_beyond_the_kept_prefix(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(text_module, "KEEP_CHARS", 10)
    acc = TextAccumulator()
    pieces = ["abcd", "efgh", "ijkl", "mnop", "é✓"]
    for piece in pieces:
        acc.append(piece)
    whole = "".join(pieces)
    assert not acc.exact
    assert acc.text() == whole[:10]
    assert acc.equals(whole)
    assert not acc.equals(whole[:-1] + "x")
    assert not acc.equals(whole + "x")


def test_difference_messages() -> None:
    assert describe_difference("abc", "abc") == "identical"
    assert "first difference at character 1" in describe_difference("abc", "axc")
    assert "1 extra character(s) at 3" in describe_difference("abc", "abcd")
    assert "2 character(s) missing at 1" in describe_difference("abc", "a")
