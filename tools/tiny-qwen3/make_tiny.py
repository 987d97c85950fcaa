#!/usr/bin/env python3
"""Write a tiny Qwen3 checkpoint whose answers are scripted by its weights, for ``transformers serve``.

usage: python tools/tiny-qwen3/make_tiny.py OUT_DIR     (standard library only; well under a second; 0.4 MB)

The real-server suite (tests/real_server/tiny_qwen3.py generates it) serves it with Hugging Face ``transformers
serve``, which streams it through its own Qwen3 response parser (``<think>`` reasoning, ``<tool_call>`` JSON
calls): the events on the wire are the server's own, the words are ours. Greedy and sampled decoding give the
same tokens (every logit margin is tens of units), so each kind of conversation has one answer:

* no tools offered: a reasoning, then a text answer (``NO_TOOLS``);
* tools offered: a reasoning, then one ``get_weather`` call for Paris (``TOOLS``);
* a tool's result in the conversation: a reasoning, then a text answer about it (``RESULT``).

How: one decoder layer of hidden size 128 with zero MLP works as a bigram table with two context flags.
Every token that has a successor owns one residual dimension (its one-hot embedding) and ``lm_head`` maps that
dimension to its successor. Attention head 0 attends (score 30) only to ``<tools>`` tokens and head 1 only to
``<tool_response>`` tokens, each writing a flag dimension: exactly 0 when the context has no such token, 1 (to
within N·e^-30) when it has one. At the two branch tokens, ``<think>`` and ``</think>``, the flags pick the
branch. Qwen3 normalises q and k per head (q_norm, k_norm), so each head's score is set by those norms alone;
the signal sits on the slowest rotary pair, which ``rope_theta`` 1e12 turns by under 1e-6 rad over 32768
positions. Ordinary text is byte-level (one token per byte, no merges); the script's words are added tokens.

Everything is written by hand, byte for byte (``model.safetensors`` is the documented safetensors layout: an
8-byte little-endian header length, the JSON header, the raw float32 data), so the output is identical on every
run and machine, whatever torch or transformers is installed: the real-server fixture checks its sha256
(``TREE_SHA256`` in tests/real_server/tiny_qwen3.py). The files are those ``transformers`` 5.23.0 reads
for a ``Qwen3ForCausalLM`` with a fast tokenizer (see README.md here for what each is and the licences).
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
import sys
from array import array
from pathlib import Path

HERE = Path(__file__).resolve().parent
NAME = "tiny-qwen3-scripted"

SPECIAL = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
MARKUP = ("<think>", "</think>", "<tool_call>", "</tool_call>", "<tools>", "</tools>", "<tool_response>",
          "</tool_response>")
EOS, PAD = "<|im_end|>", "<|endoftext|>"

# The script: per branch, the reasoning and what follows ``</think>``. Every word is a token of its own and
# appears once in the whole script (a token's successor must not depend on where it is). Lengths matter to the
# probe's cuts (checker/live/scenarios.py): max_output_tokens 16 cuts NO_TOOLS inside its text; 24 cuts TOOLS
# inside the call's arguments, after `"cel`.
NO_TOOLS = (
    ("The", " question", " wants", " a", " short", " plain", " reply."),
    ("Sunny", " and", " mild,", " with", " a light", " breeze", " from", " the west."),
)
TOOLS = (
    ("One", " weather", " tool", " was", " offered", " here;", " calling", " it", " for", " Paris", " seems", " the",
     " right", " move:"),
    ("<tool_call>", '{"name": ', '"get_weather", ', '"arguments": ', '{"city": ', '"Paris", ', '"unit": ', '"cel',
     'sius"', "}}", "</tool_call>"),
)
RESULT = (
    ("Its", " result", " came", " back", " fine!"),
    ("Paris", " is", " cloudy", " at", " eighteen", " degrees."),
)
BRANCHES = {"P": NO_TOOLS, "T": TOOLS, "R": RESULT}  # P: plain, T: tools offered, R: a tool result seen

HIDDEN, HEADS, HEAD_DIM = 128, 2, 64
CONST, FLAG_T, FLAG_R, MARK_T, MARK_R = 0, 1, 2, 3, 4  # the reserved residual dimensions
FIRST_STATE = 5
K = 100.0  # the successor's weight on its predecessor's dimension
M = 10.0  # the branch margin (both times the final norm's scale, at least sqrt(128 / 4))
SCORE = 30.0  # the attention score on a marker token (0 on every other)
ROPE_THETA = 1e12


def byte_alphabet() -> list[str]:
    """GPT-2's byte-to-unicode map (the ``ByteLevel`` pre-tokenizer's alphabet), in byte order: printable
    bytes stand for themselves, the others for 256 + n."""
    keep = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAC + 1), *range(0xAE, 0xFF + 1)]
    chars, extra = [], 0
    for b in range(256):
        if b in keep:
            chars.append(chr(b))
        else:
            chars.append(chr(256 + extra))
            extra += 1
    return chars


def words() -> list[str]:
    found = [w for branch in BRANCHES.values() for part in branch for w in part if w not in MARKUP]
    assert len(set(found)) == len(found), "a script word appears twice"
    return found


def vocabulary() -> tuple[dict[str, int], list[tuple[str, bool]]]:
    """The byte alphabet (ids 0-255, sorted as the BPE model lists them), then the added tokens: special,
    markup, script words (ids from 256 on)."""
    alphabet = sorted(byte_alphabet())
    vocab = {ch: i for i, ch in enumerate(alphabet)}
    added = [(t, True) for t in SPECIAL] + [(t, False) for t in (*MARKUP, *words())]
    for token, _special in added:
        assert token not in vocab
        vocab[token] = len(vocab)
    return vocab, added


def successors(vocab: dict[str, int]) -> dict[int, dict[str, int]]:
    """token -> {branch or "*": next token}: the generation prompt's last token (``\\n``) opens ``<think>``;
    ``<think>`` and ``</think>`` branch."""
    table: dict[int, dict[str, int]] = {}

    def link(a: str, b: str, branch: str = "*") -> None:
        table.setdefault(vocab[a], {})[branch] = vocab[b]

    link("\u010a", "<think>")  # "\n" in the byte alphabet
    for branch, (reasoning, answer) in BRANCHES.items():
        link("<think>", reasoning[0], branch)
        for a, b in zip(reasoning, (*reasoning[1:], "</think>")):
            link(a, b)
        link("</think>", answer[0], branch)
        for a, b in zip(answer, (*answer[1:], EOS)):
            link(a, b)
    return table


class Tensor:
    """A row-major float32 matrix (or vector), zero-filled."""

    def __init__(self, *shape: int) -> None:
        self.shape = shape
        self.cols = shape[-1]
        self.data = array("f", bytes(4 * math.prod(shape)))

    def set(self, row: int, col: int, value: float) -> None:
        self.data[row * self.cols + col] = value

    def add(self, row: int, col: int, value: float) -> None:
        self.data[row * self.cols + col] += value

    def fill(self, value: float) -> None:
        for i in range(len(self.data)):
            self.data[i] = value

    def raw(self) -> bytes:
        out = array("f", self.data)
        if sys.byteorder != "little":
            out.byteswap()
        return out.tobytes()


def weights(vocab: dict[str, int], table: dict[int, dict[str, int]]) -> dict[str, Tensor]:
    size = len(vocab)
    states = sorted(table)
    dim = {token: FIRST_STATE + i for i, token in enumerate(states)}
    assert FIRST_STATE + len(states) <= HIDDEN, "more script tokens than residual dimensions"
    for marker in ("<tools>", "<tool_response>"):
        assert vocab[marker] not in dim, "a marker token must carry only its marker (its norm is assumed below)"
    prefix = "model.layers.0."
    t: dict[str, Tensor] = {
        "model.embed_tokens.weight": Tensor(size, HIDDEN),
        "lm_head.weight": Tensor(size, HIDDEN),
        "model.norm.weight": Tensor(HIDDEN),
        prefix + "input_layernorm.weight": Tensor(HIDDEN),
        prefix + "post_attention_layernorm.weight": Tensor(HIDDEN),
        prefix + "self_attn.q_norm.weight": Tensor(HEAD_DIM),
        prefix + "self_attn.k_norm.weight": Tensor(HEAD_DIM),
        prefix + "self_attn.q_proj.weight": Tensor(HEADS * HEAD_DIM, HIDDEN),
        prefix + "self_attn.k_proj.weight": Tensor(HEADS * HEAD_DIM, HIDDEN),
        prefix + "self_attn.v_proj.weight": Tensor(HEADS * HEAD_DIM, HIDDEN),
        prefix + "self_attn.o_proj.weight": Tensor(HIDDEN, HEADS * HEAD_DIM),
        prefix + "mlp.gate_proj.weight": Tensor(8, HIDDEN),
        prefix + "mlp.up_proj.weight": Tensor(8, HIDDEN),
        prefix + "mlp.down_proj.weight": Tensor(HIDDEN, 8),
    }
    embed = t["model.embed_tokens.weight"]
    for token in range(size):
        embed.set(token, CONST, 1.0)
    for token, d in dim.items():
        embed.set(token, d, 1.0)
    embed.set(vocab["<tools>"], MARK_T, 1.0)
    embed.set(vocab["<tool_response>"], MARK_R, 1.0)
    for norm in ("model.norm.weight", prefix + "input_layernorm.weight", prefix + "post_attention_layernorm.weight",
                 prefix + "self_attn.q_norm.weight"):
        t[norm].fill(1.0)
    # Per head, q and k are one nonzero coordinate (the head's last, on the slowest rotary pair): after q_norm and
    # k_norm they are sqrt(HEAD_DIM) times the norm weights, so the score is HEAD_DIM * 1 * w / sqrt(HEAD_DIM).
    t[prefix + "self_attn.k_norm.weight"].fill(SCORE / math.sqrt(HEAD_DIM))
    # The value is the marker coordinate of the normalised input: sqrt(HIDDEN / 2) on a marker token (CONST and its
    # marker are its only ones); o_proj scales it back, so the flag is the attention weight on marker tokens.
    for head, mark, flag in ((0, MARK_T, FLAG_T), (1, MARK_R, FLAG_R)):
        t[prefix + "self_attn.q_proj.weight"].set(head * HEAD_DIM + HEAD_DIM - 1, CONST, 1.0)
        t[prefix + "self_attn.k_proj.weight"].set(head * HEAD_DIM + HEAD_DIM - 1, mark, 1.0)
        t[prefix + "self_attn.v_proj.weight"].set(head * HEAD_DIM, mark, 1.0)
        t[prefix + "self_attn.o_proj.weight"].set(flag, head * HEAD_DIM, 1.0 / math.sqrt(HIDDEN / 2))
    # The branch: plain K; tools K - M + 2M·T; result K - 3M + 2M·T + 4M·R. Without flags plain wins by M, with T
    # tools by M, with T and R the result by 2M; a branch token's flag weights (at most 6M) stay 4M below the K of
    # every other token's successor.
    head = t["lm_head.weight"]
    for token, succ in table.items():
        if "*" in succ:
            head.add(succ["*"], dim[token], K)
            continue
        head.add(succ["P"], dim[token], K)
        head.add(succ["T"], dim[token], K - M)
        head.add(succ["T"], FLAG_T, 2 * M)
        head.add(succ["R"], dim[token], K - 3 * M)
        head.add(succ["R"], FLAG_T, 2 * M)
        head.add(succ["R"], FLAG_R, 4 * M)
    return t


def safetensors(tensors: dict[str, Tensor]) -> bytes:
    """The safetensors layout: u64 LE header size, the JSON header (names sorted, offsets into the data), the
    data; the header padded with spaces to a multiple of 8 as the reference writer does."""
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    blobs, offset = [], 0
    for name in sorted(tensors):
        raw = tensors[name].raw()
        header[name] = {"dtype": "F32", "shape": list(tensors[name].shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def tokenizer_json(vocab: dict[str, int], added: list[tuple[str, bool]]) -> dict[str, object]:
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [{"id": vocab[token], "content": token, "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": special} for token, special in added],
        "normalizer": None,
        "pre_tokenizer": byte_level,
        "post_processor": None,
        "decoder": byte_level,
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": {token: vocab[token] for token in sorted(byte_alphabet())}, "merges": []},
    }


def tokenizer_config(vocab: dict[str, int], added: list[tuple[str, bool]]) -> dict[str, object]:
    return {
        "added_tokens_decoder": {str(vocab[token]): {"content": token, "lstrip": False, "normalized": False,
                                                     "rstrip": False, "single_word": False, "special": special}
                                 for token, special in added},
        "bos_token": None,
        "clean_up_tokenization_spaces": False,
        "eos_token": EOS,
        "extra_special_tokens": {},
        "model_max_length": 32768,
        "pad_token": PAD,
        "tokenizer_class": "PreTrainedTokenizerFast",
        "unk_token": None,
    }


def model_config(vocab: dict[str, int]) -> dict[str, object]:
    return {
        "architectures": ["Qwen3ForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": None,
        "dtype": "float32",
        "eos_token_id": vocab[EOS],
        "head_dim": HEAD_DIM,
        "hidden_act": "silu",
        "hidden_size": HIDDEN,
        "initializer_range": 0.02,
        "intermediate_size": 8,
        "layer_types": ["full_attention"],
        "max_position_embeddings": 32768,
        "max_window_layers": 1,
        "model_type": "qwen3",
        "num_attention_heads": HEADS,
        "num_hidden_layers": 1,
        "num_key_value_heads": HEADS,
        "pad_token_id": vocab[PAD],
        "rms_norm_eps": 1e-06,
        "rope_parameters": {"rope_theta": ROPE_THETA, "rope_type": "default"},
        "sliding_window": None,
        "tie_word_embeddings": False,
        "use_cache": True,
        "use_sliding_window": False,
        "vocab_size": len(vocab),
    }


def files() -> dict[str, bytes]:
    """Every file of the checkpoint, by name."""
    vocab, added = vocabulary()
    table = successors(vocab)

    def as_json(value: object) -> bytes:
        return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode()

    generation = {"do_sample": False, "eos_token_id": vocab[EOS], "max_new_tokens": 256, "pad_token_id": vocab[PAD]}
    return {
        "chat_template.jinja": (HERE / "chat_template.jinja").read_bytes(),
        "config.json": as_json(model_config(vocab)),
        "generation_config.json": as_json(generation),
        "model.safetensors": safetensors(weights(vocab, table)),
        "tokenizer.json": as_json(tokenizer_json(vocab, added)),
        "tokenizer_config.json": as_json(tokenizer_config(vocab, added)),
    }


def tree_sha256(written: dict[str, bytes]) -> str:
    """One digest over the files' names and bytes, in name order (what the fixture checks)."""
    digest = hashlib.sha256()
    for name in sorted(written):
        digest.update(name.encode() + b"\0" + hashlib.sha256(written[name]).hexdigest().encode() + b"\n")
    return digest.hexdigest()


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: make_tiny.py OUT_DIR", file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    written = files()
    for name, data in written.items():
        (out / name).write_bytes(data)
    print(tree_sha256(written))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
