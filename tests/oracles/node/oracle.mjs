// The openai-node oracle: what the real `client.responses.stream()` does with a capture.
//
// Usage: node oracle.mjs CAPTURE.sse...   prints one JSON array of outcomes (the shape of
// checker.oracles.Outcome), one per capture, in order.
//
// Each capture is served by a custom `fetch` as a 200 text/event-stream body, so the
// SDK's own SSE decoder, ResponseStream and its accumulator run exactly as for a user.
import OpenAI from 'openai';
import { existsSync, readFileSync } from 'node:fs';
import { VERSION } from 'openai/version';

const TERMINALS = new Set(['response.completed', 'response.incomplete', 'response.failed']);

// A failing helper may also reject promises nobody awaits; the outcome is recorded below.
process.on('unhandledRejection', () => {});

function itemText(item) {
  if (item.type === 'message') {
    return (item.content ?? []).map((part) => part.text ?? part.refusal ?? '').join('');
  }
  if (item.type === 'function_call') return item.arguments ?? null;
  if (item.type === 'reasoning') return (item.content ?? []).map((part) => part.text ?? '').join('');
  return null;
}

// The request sidecar's `text` (its format) is passed on, as a user's call has it: openai-node parses the
// text of a json_schema answer at the end (src/lib/ResponsesParser.ts parseResponse).
function textConfig(path) {
  const sidecar = path.replace(/\.sse$/, '.request.json');
  if (!existsSync(sidecar)) return undefined;
  try {
    return JSON.parse(readFileSync(sidecar, 'utf8'))?.text ?? undefined;
  } catch {
    return undefined;
  }
}

async function run(path) {
  const bytes = readFileSync(path);
  const client = new OpenAI({
    apiKey: 'sk-oracle',
    baseURL: 'http://oracle.invalid/v1',
    maxRetries: 0,
    fetch: async () => new Response(bytes, { status: 200, headers: { 'content-type': 'text/event-stream' } }),
  });
  const outcome = { client: 'openai-node', version: VERSION, mode: 'client', raised: null, status: null,
                    terminal: null, events: 0, output: [] };
  try {
    const text = textConfig(path);
    const stream = client.responses.stream({ model: 'oracle', input: 'oracle', ...(text ? { text } : {}) });
    for await (const event of stream) {
      outcome.events += 1;
      if (TERMINALS.has(event.type)) outcome.terminal = event.type;
    }
    const final = await stream.finalResponse();
    outcome.status = final.status ?? null;
    outcome.output = (final.output ?? []).map((item) => ({ type: item.type ?? null, id: item.id ?? null,
                                                           text: itemText(item) }));
  } catch (error) {
    const name = error?.constructor?.name ?? 'Error';
    outcome.raised = `${name}: ${error?.message ?? String(error)}`;
  }
  return outcome;
}

const outcomes = [];
for (const path of process.argv.slice(2)) outcomes.push(await run(path));
process.stdout.write(JSON.stringify(outcomes) + '\n');
