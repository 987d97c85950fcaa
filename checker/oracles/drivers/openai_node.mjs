// The openai-node driver (checker/oracles/protocol.py): `client.responses.stream()` + `finalResponse()` for
// Responses, `client.chat.completions.stream()` + `finalChatCompletion()` for chat, against the loopback server.
// The recorded request's `text` (Responses) and n, tools, token limits, stream_options and response_format
// (chat) are passed on, as a user's call has them.
import OpenAI from 'openai';
import { VERSION } from 'openai/version';
import { errorText, main, TIMEOUT_MS } from './common.mjs';

const TERMINALS = new Set(['response.completed', 'response.incomplete', 'response.failed']);
const PASSED = ['n', 'tools', 'tool_choice', 'max_tokens', 'max_completion_tokens', 'stream_options',
                'parallel_tool_calls', 'response_format'];

function itemText(item) {
  if (item.type === 'message') {
    return (item.content ?? []).map((part) => part.text ?? part.refusal ?? '').join('');
  }
  if (item.type === 'function_call') return item.arguments ?? null;
  if (item.type === 'reasoning') return (item.content ?? []).map((part) => part.text ?? '').join('');
  return null;
}

async function responses(client, call, outcome) {
  const text = call.request?.text;
  const stream = client.responses.stream({ model: call.model, input: 'oracle', ...(text ? { text } : {}) });
  for await (const event of stream) {
    outcome.events += 1;
    if (TERMINALS.has(event.type)) outcome.terminal = event.type;
  }
  const final = await stream.finalResponse();
  const items = final.output ?? [];
  outcome.status = final.status ?? null;
  outcome.output = items.map((item) => ({ type: item.type ?? null, id: item.id ?? null, text: itemText(item) }));
  const messages = items.filter((item) => item.type === 'message');
  outcome.text = messages.length ? messages.map(itemText).join('') : null;
  outcome.tool_calls = items.filter((item) => item.type === 'function_call')
    .map((item) => ({ id: item.call_id ?? null, name: item.name ?? null, arguments: item.arguments ?? null }));
}

async function chat(client, call, outcome) {
  const request = call.request ?? {};
  const params = { model: call.model, messages: request.messages ?? [{ role: 'user', content: 'oracle' }] };
  for (const key of PASSED) if (request[key] !== undefined) params[key] = request[key];
  const stream = client.chat.completions.stream(params);
  for await (const _chunk of stream) outcome.events += 1;
  const final = await stream.finalChatCompletion();
  outcome.completion = final;
  const choice = final.choices?.[0];
  outcome.text = choice?.message?.content ?? null;
  outcome.finish_reason = choice?.finish_reason ?? null;
  outcome.tool_calls = (choice?.message?.tool_calls ?? []).map((c) => ({
    id: c.id ?? null, name: c.function?.name ?? null, arguments: c.function?.arguments ?? null }));
}

async function run(call) {
  const client = new OpenAI({ apiKey: 'sk-oracle', baseURL: call.baseURL, maxRetries: 0, timeout: TIMEOUT_MS });
  const outcome = { client: 'openai-node', version: VERSION, dialect: call.dialect, raised: null, text: null,
                    tool_calls: [], status: null, finish_reason: null, errors: [],
                    mode: call.dialect === 'chat' ? 'stream' : 'client', terminal: null, events: 0, output: [] };
  try {
    await (call.dialect === 'chat' ? chat(client, call, outcome) : responses(client, call, outcome));
  } catch (error) {
    outcome.raised = errorText(error);
  }
  return outcome;
}

await main(run);
