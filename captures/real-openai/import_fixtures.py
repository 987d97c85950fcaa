"""Write captures/real-openai/*.sse from public SDK test fixtures recorded against api.openai.com.

Run from the project root with local git checkouts of the source repositories (nothing is downloaded):

    python captures/real-openai/import_fixtures.py --vercel-ai PATH --pydantic-ai PATH [--list]
    python captures/real-openai/import_fixtures.py --declare-only     # X.expect.json, X.clients.json

* vercel/ai (Apache-2.0): packages/openai/src/responses/__fixtures__/*.chunks.txt hold one event's data JSON
  per line, without the SSE framing. The framing is rebuilt the way OpenAI frames it: `event: <type>` then
  `data: <the line, byte for byte>` and a blank line.
* pydantic/pydantic-ai (MIT): VCR cassettes (tests/**/cassettes/*.yaml) keep each response body as text; the
  bodies of text/event-stream answers from https://api.openai.com/v1/responses are written as they are.

Which captures are whole recordings and which were trimmed or written by hand is decided by reading them, not
by this script: README.md says it per file, and the edited ones live in edited/ (this script writes every
capture to the folder the table of KEEP names; one not named there is reported and skipped).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
VERCEL_DIR = "packages/openai/src/responses/__fixtures__"
PYDANTIC_DIRS = ("tests/models/cassettes", "tests/cassettes")
OPENAI_URL = "https://api.openai.com/v1/responses"

# capture name -> {"folder": "" (whole recordings) or "edited" (trimmed or hand-written in the source), "note"}.
KEEP: dict[str, dict[str, str]] = json.loads((HERE / "fixtures.json").read_text())
LICENSES = {"vercel/ai": ("LICENSE", "vercel-ai.LICENSE", "Apache-2.0"),
            "pydantic/pydantic-ai": ("LICENSE", "pydantic-ai.LICENSE", "MIT")}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def frame(lines: list[str]) -> bytes:
    """OpenAI's framing of a list of event data lines: `event: <type>`, `data: <line>`, blank line."""
    out = []
    for line in lines:
        event = json.loads(line)["type"]
        out.append(f"event: {event}\ndata: {line}\n\n")
    return "".join(out).encode()


def split_streams(lines: list[str]) -> list[list[str]]:
    """A fixture file that holds several responses one after the other, as one list of lines per response."""
    streams: list[list[str]] = []
    for line in lines:
        if not streams or json.loads(line)["type"] == "response.created":
            streams.append([])
        streams[-1].append(line)
    return streams


def vercel(repo: Path) -> dict[str, tuple[bytes, str]]:
    commit = git(repo, "rev-parse", "HEAD").strip()
    found = {}
    for path in git(repo, "ls-tree", "--name-only", "HEAD", VERCEL_DIR + "/").split():
        if not path.endswith(".chunks.txt"):
            continue
        lines = [line for line in git(repo, "show", f"HEAD:{path}").split("\n") if line.strip()]
        name = "vercel-" + Path(path).name[: -len(".chunks.txt")].replace(".", "-")
        try:
            streams = split_streams(lines)
            for n, stream in enumerate(streams, 1):
                suffix, which = (f"-stream{n}", f", response {n} of {len(streams)}") if len(streams) > 1 else ("", "")
                found[name + suffix] = (frame(stream), f"vercel/ai {path} @ {commit}{which}")
        except (json.JSONDecodeError, KeyError, TypeError):
            print(f"skipped (a line is not an event's JSON): {path}", file=sys.stderr)
    return found


def _interactions(text: str) -> list[dict[str, Any]]:
    doc = yaml.safe_load(text) or {}
    return list(doc.get("interactions") or [])


def pydantic(repo: Path) -> dict[str, tuple[bytes, str]]:
    commit = git(repo, "rev-parse", "HEAD").strip()
    listed = git(repo, "grep", "-l", "event: response.created", "HEAD", "--", *PYDANTIC_DIRS).split()
    found: dict[str, tuple[bytes, str]] = {}
    seen: set[str] = set()
    for entry in listed:
        path = entry.split(":", 1)[1]
        streams = []
        for interaction in _interactions(git(repo, "show", f"HEAD:{path}")):
            body = (interaction["response"].get("body") or {}).get("string")
            if interaction["request"].get("uri") == OPENAI_URL and body and "event: response.created" in body:
                streams.append(body)
        stem = Path(path).stem.removeprefix("test_").replace("_", "-").replace("[", "-").replace("]", "")
        for n, body in enumerate(streams, 1):
            digest = hashlib.sha256(body.encode()).hexdigest()
            if digest in seen:  # the same recording in two cassettes
                continue
            seen.add(digest)
            name = f"pydantic-{stem}" + (f"-{n}" if len(streams) > 1 else "")
            found[name] = (body.encode(), f"pydantic/pydantic-ai {path} @ {commit}, interaction {n}")
    return found


README_HEAD = """\
# Real OpenAI Responses streams

Streams recorded from OpenAI's own API (`POST https://api.openai.com/v1/responses`, `stream: true`) by the test
suites of two public SDKs, kept here as raw `.sse` bodies so that sse-check can be held to them: a stream the
reference server sends must not get an error that the real clients contradict.

Written by `import_fixtures.py` from local checkouts of the source repositories (run it from the project root:
`python captures/real-openai/import_fixtures.py --vercel-ai PATH --pydantic-ai PATH`); `fixtures.json` lists
the captures kept, where each goes and what it shows. Nothing was changed by this project:

* **vercel/ai** keeps each event's `data` JSON on a line (`*.chunks.txt`) without the SSE framing; the framing
  was rebuilt as OpenAI frames it (`event: <type>` equal to the JSON's `type`, then `data: <the line, byte for
  byte>`, then a blank line). A fixture file holding several responses one after the other was split into one
  capture per response (`-streamN`). The fixture `parallel-tool-call-wrapper.1.chunks.txt` (hand-written, its
  first line is not valid JSON) and `github-copilot-id-rotation.1.chunks.txt` (GitHub Copilot's gateway, not
  OpenAI) were left out.
* **pydantic/pydantic-ai** keeps the body of each HTTP answer in its VCR cassettes (`*.yaml`); the bodies of
  `text/event-stream` answers from api.openai.com are written as they are. Cassettes of other hosts (OpenRouter,
  DeepSeek, Bedrock) were left out.

Captures in this folder are whole recordings as the source keeps them (**verbatim**). Those the source trimmed
or wrote by hand are in `edited/`, with what was changed: they are real in shape, not in every byte, and their
findings may be the editor's, not OpenAI's. `older-api/` holds verbatim recordings of March 2025, before OpenAI
sent `sequence_number`: what today's API and its description (2.3.0) require, and what clients that order or
resume by it need (the Open Responses suite, Grok CLI), so LIF015 stays an error there as for any server that
omits it.

Next to each capture, `X.expect.json` declares its complete set of findings under the `openai` profile and
`X.clients.json` the client matrix (both written by `import_fixtures.py --declare-only`, then reviewed);
`tests/test_real_openai.py` checks both, and that no verbatim recording gets an error that the real clients
contradict (an error stands only where openai-python or openai-node breaks on it), and
`tests/test_client_oracles.py` that the matrix is what the real openai-python and openai-node do with each
stream.

What OpenAI sends where the published description (2.3.0) says otherwise, and how sse-check reports it:

| what api.openai.com sends | how sse-check treats it |
|---|---|
| `"user": null`, `"usage": null` (before the terminal event), MCP tools' `"server_description": null` | legal: the clients type them nullable (schema overlay, `tools/gen_schemas.py`) |
| `function_call_arguments.done` without `name`; `output_text` parts without `logprobs` (early 2025); `shell_call` without `environment` (December 2025) | legal: neither client's type requires them (overlay) |
| an in-progress `web_search_call` without `action`, `image_generation_call` without `result` at `output_item.added` | legal: only the done form carries them (overlay, `IN_PROGRESS_ONLY_AT_DONE`) |
| the `error` event nested, `{"type": "error", "error": {…}}` | an error event (LIF013, warning); the clients raise APIError on it, as intended |
| `usage.input_tokens_details` without `cache_write_tokens` (before mid-2026) | LIF018 as a known deviation (info): version skew |
| an error code outside the enum (`insufficient_quota`) | SCH002 as a known deviation (info) |
| web search sources `{type: "api", name}` | SCH003 as a known deviation (info) |
| no `sequence_number` (March 2025, `older-api/`) | LIF015, an error as for any server today: the API has sent it since |
| reasoning `encrypted_content` re-encrypted between `output_item.done` and `response.completed` | REC007 (info): not comparable, said; the rest of the item is compared (REC004) |
| `program_output`, `shell_call_output` added `completed`; a program's `function_call` done `in_progress` | by design: no ITM012 / ITM013 |

Left as they are, for the clients' sake: `apply_patch_call_operation_diff.*` events (in no published description;
openai-node throws on them: SCH005), `mcp_list_tools` items that get no `output_item.done` (LIF008 and ITM011,
warnings; the final output lists them), and a client `tool_search_call` whose `call_id` changes between added and
done (`vercel-openai-client-tool-search-1.sse`: ITM007, openai-python raises "Completed output item identity
changed.").

Licences: the vercel/ai fixtures are Apache-2.0 (`LICENSES/vercel-ai.LICENSE`), the pydantic/pydantic-ai
cassettes MIT (`LICENSES/pydantic-ai.LICENSE`, copyright Pydantic Services Inc.).

"""


def _summary(data: bytes) -> str:
    """The item types a capture streams and how it ends, read from its events."""
    items: list[str] = []
    events = [json.loads(line[6:]) for line in data.decode().splitlines() if line.startswith("data: ")]
    for event in events:
        if event["type"] == "response.output_item.added" and event["item"]["type"] not in items:
            items.append(event["item"]["type"])
    end = events[-1]["type"]
    model = next((e["response"].get("model") for e in events if isinstance(e.get("response"), dict)), "?")
    return f"{model}; {', '.join(items) or 'no item'}; {len(events)} events, ends with {end}"


def readme(rows: list[tuple[str, str, bytes]]) -> str:
    head = README_HEAD
    table = ["| capture | source (repository, path @ commit) | licence | what it shows | state |",
             "|---|---|---|---|---|"]
    for name, source, data in rows:
        entry = KEEP[name]
        folder = entry["folder"]
        repo = source.split(" ", 1)[0]
        if folder == "older-api":
            state = "verbatim, older API"
        else:
            state = "verbatim" if not folder else entry["note"].split(":")[0].split(" (")[0]
        note = entry["note"] if not folder else entry["note"]
        table.append(f"| `{folder + '/' if folder else ''}{name}.sse` | {source} | {LICENSES[repo][2]} | "
                     f"{_summary(data)}: {note} | {state} |")
    return head + "\n".join(table) + "\n"


def declare() -> None:
    """Write each capture's X.expect.json and X.clients.json from what sse-check finds now under `openai`.

    The declarations are then reviewed like code: tests/test_real_openai.py holds the engine to them, and
    tests/test_client_oracles.py holds the matrix to what the real clients do with the same bytes."""
    from checker.compat import matrix
    from checker.engine import StreamLinter
    from checker.profiles import get_profile

    for path in sorted(HERE.rglob("*.sse")):
        linter = StreamLinter(profile=get_profile("openai"))
        linter.feed(path.read_bytes())
        result = linter.close()
        stem = path.name[: -len(".sse")]
        expect = {"openai": sorted({f.code for f in result.findings})}
        path.with_name(f"{stem}.expect.json").write_text(json.dumps(expect, indent=2) + "\n")
        path.with_name(f"{stem}.clients.json").write_text(json.dumps(matrix(result).verdicts(), indent=2) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vercel-ai", type=Path)
    parser.add_argument("--pydantic-ai", type=Path)
    parser.add_argument("--list", action="store_true", help="list what the sources hold, write nothing")
    parser.add_argument("--declare-only", action="store_true",
                        help="only (re)write the X.expect.json and X.clients.json declarations from sse-check's "
                             "current findings (review the diff)")
    args = parser.parse_args()
    if args.declare_only:
        declare()
        return 0
    if args.vercel_ai is None or args.pydantic_ai is None:
        parser.error("--vercel-ai and --pydantic-ai are needed (or --declare-only)")
    found = {**vercel(args.vercel_ai), **pydantic(args.pydantic_ai)}
    rows = []
    for name, (data, source) in sorted(found.items(), key=lambda kv: (KEEP.get(kv[0], {}).get("folder", ""), kv[0])):
        if args.list:
            print(f"{name}\t{len(data)}\t{source}")
            continue
        if name not in KEEP:
            print(f"skipped (not in fixtures.json): {name}", file=sys.stderr)
            continue
        folder = HERE / KEEP[name]["folder"]
        folder.mkdir(exist_ok=True)
        (folder / f"{name}.sse").write_bytes(data)
        rows.append((name, source, data))
    if args.list:
        return 0
    missing = set(KEEP) - {name for name, _, _ in rows}
    if missing:
        print(f"not found in the sources: {sorted(missing)}", file=sys.stderr)
        return 1
    (HERE / "LICENSES").mkdir(exist_ok=True)
    for repo, checkout in (("vercel/ai", args.vercel_ai), ("pydantic/pydantic-ai", args.pydantic_ai)):
        path, name, _ = LICENSES[repo]
        (HERE / "LICENSES" / name).write_text(git(checkout, "show", f"HEAD:{path}"))
    (HERE / "README.md").write_text(readme(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
