"""tools/tiny-qwen3/make_tiny.py writes the same bytes on every run, and they are the ones the real-server
suite expects (``TREE_SHA256`` of tests/real_server/tiny_qwen3.py): a changed script or chat template must
change the pinned digest with it. The model's behaviour under the real ``transformers serve`` is checked by
the real-server suite (tests/real_server/test_transformers_serve.py)."""

from __future__ import annotations

import importlib.util
import json
import struct
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GENERATOR = ROOT / "tools" / "tiny-qwen3" / "make_tiny.py"


def _fixture_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("sse_check_tiny_qwen3", ROOT / "tests" / "real_server" / "tiny_qwen3.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _generate(out: Path) -> str:
    proc = subprocess.run([sys.executable, str(GENERATOR), str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_the_generator_writes_the_pinned_bytes_every_time(tmp_path: Path) -> None:
    tiny = _fixture_module()
    first, second = _generate(tmp_path / "a"), _generate(tmp_path / "b")
    assert first == second == tiny.TREE_SHA256
    assert tiny.tree_sha256(tmp_path / "a") == tiny.TREE_SHA256
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == ["chat_template.jinja", "config.json", "generation_config.json", "model.safetensors",
                     "tokenizer.json", "tokenizer_config.json"]
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_the_safetensors_file_holds_what_the_config_declares(tmp_path: Path) -> None:
    _generate(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    data = (tmp_path / "model.safetensors").read_bytes()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    assert header.pop("__metadata__") == {"format": "pt"}
    end = 0
    for name, entry in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"]):
        start, stop = entry["data_offsets"]
        assert start == end and entry["dtype"] == "F32", name
        count = 1
        for n in entry["shape"]:
            count *= n
        assert stop - start == 4 * count, name
        end = stop
    assert len(data) == 8 + size + end
    assert header["model.embed_tokens.weight"]["shape"] == [config["vocab_size"], config["hidden_size"]]
    assert header["lm_head.weight"]["shape"] == [config["vocab_size"], config["hidden_size"]]
    vocab = json.loads((tmp_path / "tokenizer.json").read_text())
    assert len(vocab["model"]["vocab"]) + len(vocab["added_tokens"]) == config["vocab_size"]
