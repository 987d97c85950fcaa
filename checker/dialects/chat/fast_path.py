"""The Chat Completions machine's hot path: an ordinary content chunk, and the run of chunks it starts.

``try_fast`` (``ChatMachine.try_fast``: the class binds these functions as its methods, so the per-chunk call
costs no extra indirection) either takes a chunk whole, with exactly the state changes of the full path
(``ChatMachine.handle``) when that path would report nothing, or leaves the state untouched. ``run_spec``
offers the engine the run such a chunk starts (checker/dialects/runs.py, checker/run_template.py).
tests/test_chat_corpus.py and tests/test_engine_paths.py hold the paths to the same findings on the corpus.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from checker.dialects.chat import vocabulary as vocab
from checker.dialects.runs import RunSpec

if TYPE_CHECKING:
    from checker.dialects.chat.machine import ChatMachine

_FAST_DELTA_KEYS = frozenset(vocab.TEXT_FIELDS)


def try_fast(self: ChatMachine, etype: Any, obj: dict[str, Any]) -> bool:
    """Take an ordinary content chunk whole (one choice, text deltas of fields it already has, the first
    chunk's identity), or return False having changed nothing. The engine calls it with chunks the schema
    accepted; anything else is refused, never raised on."""
    ident = self._fast_identity
    if ident is None:
        return False
    get = obj.get
    try:
        if get("usage") is not None or (get("id"), get("object"), get("created"), get("model"),
                                        get("system_fingerprint")) != ident:
            return False
        choices = obj["choices"]
        if len(choices) != 1:
            return False
        choice = choices[0]
        index = choice["index"]
        if choice["finish_reason"] is not None or type(index) is not int or choice.get("logprobs") is not None:
            return False
        if "message" in choice:  # CHT029's: the full path follows what openai-node does with it
            return False
        state = self.choices.get(index)
        delta = choice["delta"]
        if state is None or state.finish is not None or len(delta) != 1:
            return False
        ((name, value),) = delta.items()
        # A field the choice already has (a first fragment may be a vendor field to report).
        if type(value) is not str or name not in state.lengths or name not in _FAST_DELTA_KEYS:
            return False
    except (KeyError, TypeError, AttributeError):
        return False
    self.chunks += 1
    state.deltas += 1
    if value:
        state.lengths[name] += len(value)
        if self.keep_texts:
            state.texts[name].append(value)
    return True


def run_spec(self: ChatMachine, obj: dict[str, Any]) -> RunSpec | None:
    """The run ``obj`` (just taken by ``try_fast``) starts (checker/run_template.py): the next chunks that
    differ from it only in the text of its one delta field (and the ``obfuscation`` nobody reads). What
    ``try_fast`` compared stays as it was while only ``take`` runs: the identity, the choice unfinished, the
    field among those it has; so it would take each such chunk, and ``take`` does what it would have done (the
    texts joined: what is kept is joined anyway)."""
    choice = obj["choices"][0]
    ((name, _),) = choice["delta"].items()
    state = self.choices[choice["index"]]
    lengths, texts = state.lengths, state.texts if self.keep_texts else None

    def take(value: str, count: int, _: int | None) -> None:
        self.chunks += count
        state.deltas += count
        if value:
            lengths[name] += len(value)
            if texts is not None:
                texts[name].append(value)

    return ("choices", 0, "delta", name), None, (("obfuscation",),), None, take
