// The openai-node oracle for Chat Completions: what the real `client.chat.completions.stream()` does with a
// capture, through its own SSE decoder and ChatCompletionStream, then `finalChatCompletion()`.
//
// Usage: node chat_oracle.mjs < cases.json   where cases.json is [{"path": CAPTURE, "request": {...}|null}, ...]
// prints one JSON array of outcomes (the shape of checker.oracles.chat.ChatOutcome), one per case, in order.
//
// Each capture is served by a custom `fetch` as a 200 text/event-stream body; the request sidecar's n, tools,
// token limits, stream_options and response_format are passed on, as a user's call has them.
import OpenAI from 'openai';
import { readFileSync } from 'node:fs';
import { VERSION } from 'openai/version';

const PASSED = ['n', 'tools', 'tool_choice', 'max_tokens', 'max_completion_tokens', 'stream_options',
                'parallel_tool_calls', 'response_format'];

process.on('unhandledRejection', () => {});

async function run({ path, request }) {
  const bytes = readFileSync(path);
  const client = new OpenAI({
    apiKey: 'sk-oracle',
    baseURL: 'http://oracle.invalid/v1',
    maxRetries: 0,
    fetch: async () => new Response(bytes, { status: 200, headers: { 'content-type': 'text/event-stream' } }),
  });
  const params = { model: 'oracle', messages: request?.messages ?? [{ role: 'user', content: 'oracle' }] };
  for (const key of PASSED) if (request && request[key] !== undefined) params[key] = request[key];
  const outcome = { client: 'openai-node', version: VERSION, mode: 'stream', raised: null, chunks: 0,
                    completion: null };
  try {
    const stream = client.chat.completions.stream(params);
    for await (const _chunk of stream) outcome.chunks += 1;
    outcome.completion = await stream.finalChatCompletion();
  } catch (error) {
    const name = error?.constructor?.name ?? 'Error';
    outcome.raised = `${name}: ${error?.message ?? String(error)}`;
  }
  return outcome;
}

const cases = JSON.parse(readFileSync(0, 'utf8'));
const outcomes = [];
for (const c of cases) outcomes.push(await run(c));
process.stdout.write(JSON.stringify(outcomes) + '\n');
