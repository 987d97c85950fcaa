// The @anthropic-ai/sdk oracle: what the real `client.messages.stream()` / `finalMessage()` does with a capture.
//
// Usage: node oracle.mjs CAPTURE.sse...   prints one JSON array of outcomes (the shape of
// checker.oracles.Outcome), one per capture, in order.
//
// Each capture is served by a loopback HTTP server (node:http on 127.0.0.1, a free port) as a 200
// text/event-stream body, and the client is pointed at it with its default fetch: the SDK's HTTP stack, its SSE
// decoder (src/core/streaming.ts) and MessageStream run exactly as for a user.
import Anthropic from '@anthropic-ai/sdk';
import { VERSION } from '@anthropic-ai/sdk/version';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

// A failing helper may also reject promises nobody awaits; the outcome is recorded below.
process.on('unhandledRejection', () => {});

function canonical(value) {
  // JSON with sorted keys and Python's separators: what checker.oracles.anthropic_python.canonical writes.
  if (Array.isArray(value)) return '[' + value.map(canonical).join(',') + ']';
  if (value && typeof value === 'object') {
    return '{' + Object.keys(value).sort().map((k) => JSON.stringify(k) + ':' + canonical(value[k])).join(',') + '}';
  }
  return value === undefined ? 'null' : JSON.stringify(value);
}

function blockItem(block) {
  const type = block?.type ?? null;
  if (type === 'tool_use' || type === 'server_tool_use') {
    return { type, id: block.id ?? null, text: canonical(block.input) };
  }
  if (type === 'thinking') return { type, id: null, text: block.thinking ?? null };
  if (type === 'redacted_thinking') return { type, id: null, text: block.data ?? null };
  return { type, id: null, text: block?.text ?? null };
}

async function serve(bytes) {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'close' });
      res.end(bytes);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

async function run(path) {
  const bytes = readFileSync(path);
  const server = await serve(bytes);
  const client = new Anthropic({
    apiKey: 'sk-ant-oracle',
    baseURL: `http://127.0.0.1:${server.address().port}`,
    maxRetries: 0,
    timeout: 30000,
  });
  const outcome = { client: 'anthropic-ts', version: VERSION, mode: 'stream', raised: null, status: null,
                    terminal: null, events: 0, output: [] };
  try {
    const stream = client.messages.stream({ model: 'oracle', max_tokens: 1024,
                                            messages: [{ role: 'user', content: 'hi' }] });
    for await (const event of stream) {
      outcome.events += 1;
      if (event.type === 'message_stop') outcome.terminal = 'message_stop';
    }
    const final = await stream.finalMessage();
    outcome.status = final.stop_reason ?? null;
    outcome.output = (final.content ?? []).map(blockItem);
  } catch (error) {
    const name = error?.constructor?.name ?? 'Error';
    outcome.raised = `${name}: ${String(error?.message ?? error).split('\n')[0]}`;
  } finally {
    server.close();
    server.closeAllConnections?.();
  }
  return outcome;
}

const outcomes = [];
for (const path of process.argv.slice(2)) outcomes.push(await run(path));
process.stdout.write(JSON.stringify(outcomes) + '\n');
