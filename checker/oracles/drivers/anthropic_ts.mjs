// The @anthropic-ai/sdk driver (checker/oracles/protocol.py): `client.messages.stream()` + `finalMessage()`
// against the loopback server (the SDK adds /v1 itself: it gets the base URL without it).
import Anthropic from '@anthropic-ai/sdk';
import { VERSION } from '@anthropic-ai/sdk/version';
import { canonical, errorText, main, TIMEOUT_MS } from './common.mjs';

function blockItem(block) {
  const type = block?.type ?? null;
  if (type === 'tool_use' || type === 'server_tool_use') {
    return { type, id: block.id ?? null, text: canonical(block.input) };
  }
  if (type === 'thinking') return { type, id: null, text: block.thinking ?? null };
  if (type === 'redacted_thinking') return { type, id: null, text: block.data ?? null };
  return { type, id: null, text: block?.text ?? null };
}

async function run(call) {
  const client = new Anthropic({ apiKey: 'sk-ant-oracle', baseURL: call.baseURL.replace(/\/v1$/, ''),
                                 maxRetries: 0, timeout: TIMEOUT_MS });
  const outcome = { client: 'anthropic-ts', version: VERSION, dialect: 'messages', raised: null, text: null,
                    tool_calls: [], status: null, finish_reason: null, errors: [], mode: 'stream', terminal: null,
                    events: 0, output: [] };
  try {
    const stream = client.messages.stream({ model: call.model, max_tokens: 1024,
                                            messages: [{ role: 'user', content: 'hi' }] });
    for await (const event of stream) {
      outcome.events += 1;
      if (event.type === 'message_stop') outcome.terminal = 'message_stop';
    }
    const final = await stream.finalMessage();
    const blocks = final.content ?? [];
    outcome.status = final.stop_reason ?? null;
    outcome.finish_reason = final.stop_reason ?? null;
    outcome.output = blocks.map(blockItem);
    const texts = blocks.filter((b) => b.type === 'text');
    outcome.text = texts.length ? texts.map((b) => b.text ?? '').join('') : null;
    outcome.tool_calls = blocks.filter((b) => b.type === 'tool_use')
      .map((b) => ({ id: b.id ?? null, name: b.name ?? null, arguments: canonical(b.input) }));
  } catch (error) {
    outcome.raised = errorText(error);
  }
  return outcome;
}

await main(run);
