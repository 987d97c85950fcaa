"""The compiled hot path (checker/_speedups.c) is built, current and in use, and gives exactly what the
pure-Python code it mirrors gives: on the whole corpus (tests/native_corpus.py, run both ways), and on random
templates and bytes against the reference (the regular expression of checker/run_match.py, the translate of
checker/json_scan.py).

A checkout without the built extension fails here when a C compiler is there (CI has one: a silent fallback to
the slow path must not pass), and skips only where there is no compiler at all.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker import json_scan, native, run_match

try:
    from checker import _speedups
except ImportError:
    _speedups = None  # type: ignore[assignment]

ROOT = Path(__file__).resolve().parents[1]
PURE = os.environ.get("SSE_CHECK_PURE", "") not in ("", "0")
needs_extension = pytest.mark.skipif(_speedups is None, reason="checker._speedups is not built (see the test above)")


def _compiler() -> str | None:
    """The C compiler setuptools would use here, if it exists."""
    command = os.environ.get("CC") or sysconfig.get_config_var("CC") or ""
    words = shlex.split(command)
    return shutil.which(words[0]) if words else None


def test_the_extension_is_built_current_and_in_use() -> None:
    if _speedups is None:
        if _compiler() is None:
            pytest.skip("no C compiler here: sse-check runs its pure-Python hot path")
        pytest.fail("checker._speedups is not built in this checkout although a C compiler is here: "
                    "run `make .venv/.installed` (or `pip install -e .`)")
    source = ROOT / "checker" / "_speedups.c"
    assert _speedups.SOURCE_SHA == hashlib.sha256(source.read_bytes()).hexdigest(), (
        "checker._speedups was built from another checker/_speedups.c: run `pip install -e .` again")
    matcher = run_match.make([b'{"t":"', b'"}'], ["text"], [None], 0, None, None, None, lambda *a: None)
    if PURE:
        assert native.speedups is None and json_scan.has_long_digits is json_scan.long_digits_pure
        assert not isinstance(getattr(matcher.match, "__self__", None), _speedups.Matcher)
    else:
        assert native.speedups is _speedups and json_scan.has_long_digits is _speedups.long_digits
        assert isinstance(getattr(matcher.match, "__self__", None), _speedups.Matcher)


@needs_extension
def test_the_corpus_lints_the_same_compiled_and_pure() -> None:
    """Every capture, every profile, fed in pieces: the same findings, counts, terminals and texts."""
    runs = {}
    for name, pure in (("compiled", False), ("pure", True)):
        env = {k: v for k, v in os.environ.items() if k != "SSE_CHECK_PURE"}
        if pure:
            env["SSE_CHECK_PURE"] = "1"
        runs[name] = subprocess.Popen([sys.executable, str(ROOT / "tests" / "native_corpus.py")], env=env,
                                      stdout=subprocess.PIPE, text=True)
    out = {name: json.loads(proc.communicate()[0]) for name, proc in runs.items()}
    assert [proc.returncode for proc in runs.values()] == [0, 0]
    compiled, pure = out["compiled"], out["pure"]
    assert (compiled["implementation"], pure["implementation"]) == ("compiled (checker._speedups)", "pure Python")
    for run in (compiled, pure):  # the run paths were taken, or the comparison would prove little
        assert run["used"]["templates"] > 1000 and run["used"]["wire_events"] > 5000, run["used"]
    assert compiled["used"] == pure["used"]
    assert compiled["records"].keys() == pure["records"].keys()
    differ = [f"{capture} ({profile})" for capture, profiles in compiled["records"].items()
              for profile, record in profiles.items() if pure["records"][capture][profile] != record]
    assert not differ, f"{len(differ)} lints differ, first: {differ[:5]}"


# -- long_digits --------------------------------------------------------------------------------------------

_DIGITY = st.lists(st.one_of(st.sampled_from([b"0", b"7", b"9", b"a", b" ", b"/", b":", b"\xc3\xa9"]),
                             st.integers(13, 18).map(lambda n: b"1" * n)), max_size=40).map(b"".join)


@needs_extension
@settings(max_examples=400, deadline=None)
@given(data=st.one_of(_DIGITY, st.binary(max_size=80)))
def test_long_digits_agrees(data: bytes) -> None:
    assert _speedups.long_digits(data) is json_scan.long_digits_pure(data)


# -- the run matcher ----------------------------------------------------------------------------------------

# Bytes that matter to a hole: quotes, escapes, control characters, digits, JSON punctuation, UTF-8.
_PIECES = [b'"', b"\\", b"\x01", b"\x1f", b"0", b"1", b"9", b"a", b" ", b",", b"}", b":", b"\n", b"\xc3\xa9", b"."]
_BYTES = st.lists(st.sampled_from(_PIECES), max_size=6).map(b"".join)
_NUMBERS = st.one_of(st.sampled_from([b"0", b"00", b"07", b"1", b"999999999999999", b"1000000000000000", b""]),
                     st.integers(0, 10**17).map(lambda n: str(n).encode()))


@st.composite
def _templates(draw: st.DrawFn) -> dict[str, Any]:
    """A template's literals, kinds and pins, mostly of the shape build() makes (a quote after a text hole, no
    digit after a number), sometimes not (the compiled matcher refuses those: the regex is used)."""
    kinds = draw(st.lists(st.sampled_from(["text", "pinned", "number"]), min_size=1, max_size=4))
    if "text" not in kinds:
        kinds[0] = "text"
    literals = [draw(_BYTES)]
    for kind in kinds:
        start = b'"' if kind != "number" else draw(st.sampled_from([b",", b"}", b" ", b'"', b"a"]))
        literals.append(draw(st.one_of(st.just(start), _BYTES.map(lambda b, s=start: s + b), _BYTES)))
    pins = [draw(_BYTES) if kind == "pinned" else None for kind in kinds]
    numbers = [n for n, kind in enumerate(kinds) if kind == "number"]
    return {"literals": literals, "kinds": kinds, "pins": pins, "text": kinds.index("text"),
            "number": draw(st.sampled_from(numbers)) if numbers else None,
            "floor": draw(st.sampled_from([None, 0, 5, 10**15])), "name": draw(st.sampled_from([None, "ev", " x"]))}


@st.composite
def _datas(draw: st.DrawFn, template: dict[str, Any]) -> list[bytes]:
    """Events' data: the template filled with values of the holes' kinds (or any bytes), sometimes the pinned
    bytes, sometimes a literal changed."""
    out = []
    for _ in range(draw(st.integers(1, 6))):
        parts = [template["literals"][0]]
        for kind, pin, literal in zip(template["kinds"], template["pins"], template["literals"][1:]):
            value = draw(_NUMBERS) if kind == "number" else draw(st.one_of(st.just(pin or b"w"), _BYTES))
            parts += [value, literal]
        data = b"".join(parts)
        if draw(st.integers(0, 9)) == 0:
            at = draw(st.integers(0, len(data)))
            changed = data[:at] + draw(_BYTES) + data[at + 1:]
            if changed.isascii() or changed.decode("utf-8", "replace").encode() == changed:
                data = changed  # the decoder hands on valid UTF-8 only (checker/sse.py)
        out.append(data)
    return out


def _both(template: dict[str, Any]) -> tuple[list[Any], run_match.RunMatcher, list[Any], run_match.RunMatcher]:
    t = template
    taken_c: list[Any] = []
    taken_r: list[Any] = []
    compiled = run_match.make(t["literals"], t["kinds"], t["pins"], t["text"], t["number"], t["floor"], t["name"],
                              lambda *args: taken_c.append(args))
    head = None if t["name"] is not None and t["name"].startswith(" ") else \
        (b"" if t["name"] is None else b"event: " + t["name"].encode() + b"\n") + b"data: "
    reference = run_match._regex(t["literals"], t["kinds"], t["pins"], t["text"], t["number"],
                                 -1 if t["floor"] is None else t["floor"], head, lambda *args: taken_r.append(args))
    return taken_c, compiled, taken_r, reference


@needs_extension
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_the_matcher_agrees_with_its_regex(data: st.DataObject) -> None:
    template = data.draw(_templates())
    datas = data.draw(_datas(template))
    taken_c, compiled, taken_r, reference = _both(template)
    for item in datas:
        assert compiled.shape(item) == reference.shape(item)
        assert compiled.match(item) == reference.match(item)
    compiled.flush()
    reference.flush()
    assert taken_c == taken_r
    assert (compiled.wire is None) == (reference.wire is None)
    if compiled.wire is None or reference.wire is None:
        return
    head = b"" if template["name"] is None else b"event: " + template["name"].encode() + b"\n"
    block = b"".join(head + b"data: " + item + b"\n\n" for item in datas)
    block = block[:data.draw(st.integers(len(block) // 2, len(block)))]  # a cut last event, sometimes
    pos = data.draw(st.sampled_from([0, 1, len(block)]))
    fits = data.draw(st.sampled_from([len(block) + 5, 40, 1, 0]))
    room = data.draw(st.sampled_from([1, 3, 100]))
    assert compiled.wire(block, pos, fits, room) == reference.wire(block, pos, fits, room)
    compiled.flush()
    reference.flush()
    assert taken_c == taken_r


@needs_extension
def test_the_matcher_refuses_what_it_cannot_match_like_the_regex() -> None:
    """A hole not ended by the next byte (a text hole before a letter) would need the regex's backtracking:
    the compiled Matcher refuses it, and make() falls back to the regex."""
    with pytest.raises(ValueError):
        _speedups.Matcher((b"{", b"a}"), b"t", (None,), b"data: ", 0, -1, -1)
    with pytest.raises(ValueError):
        _speedups.Matcher((b"{", b'"', b"1"), b"tn", (None, None), b"data: ", 0, 1, -1)
    matcher = run_match.make([b"{", b"a}"], ["text"], [None], 0, None, None, None, lambda *a: None)
    assert not isinstance(getattr(matcher.match, "__self__", None), _speedups.Matcher)
    assert matcher.match(b"{xya}") and not matcher.match(b'{x"a}')


@needs_extension
def test_limits_and_numbers_beyond_64_bits_are_taken_as_the_pure_path_takes_them() -> None:
    """A limit of 10**20 bytes or events (the Python API takes any int) is as good as none; a floor beyond 64
    bits leaves the template to the regex."""
    from checker.engine import Limits, StreamLinter
    from checker.synth import StreamBuilder, encode_event

    data = b"".join(encode_event(e) for e in StreamBuilder().message([f" w{i}" for i in range(300)]).events())
    huge = Limits(max_line_bytes=10**20, max_event_bytes=10**20, max_events=10**20)
    results = []
    for limits in (huge, Limits()):
        linter = StreamLinter(limits=limits, keep_texts=True)
        for start in range(0, len(data), 1024):
            linter.feed(data[start:start + 1024])
        results.append(linter.close())
    assert results[0].findings == results[1].findings == [] and results[0].texts == results[1].texts
    taken: list[Any] = []
    matcher = run_match.make([b'{"n":', b',"t":"', b'"}'], ["number", "text"], [None, None], 1, 0, 10**30, None,
                             lambda *args: taken.append(args))
    assert not isinstance(getattr(matcher.match, "__self__", None), _speedups.Matcher)
    assert not matcher.match(b'{"n":5,"t":"x"}')
    compiled = _speedups.Matcher((b'{"', b'"}'), b"t", (None,), b"data: ", 0, -1, -1)
    block = b'data: {"a"}\n\ndata: {"b"}\n\n'
    assert compiled.wire(block, 0, 10**20, 10**20) == (len(block), 2)
    assert compiled.wire(block, -5, 10**20, -(10**20)) == (0, 0)
