// The Vercel AI SDK driver: streamText() over a loopback server, as its users call it.
//
//   node vercel_ai.mjs [--provider openai-compatible] BASE_URL MODEL DIALECT [TOOL,NAMES]  -> one JSON outcome
//   node vercel_ai.mjs [--provider openai-compatible] --batch < jobs                        -> one line per job
//
// Runs in the vercel-ai environment (checker/oracles/pins/vercel-ai: ai, @ai-sdk/openai, @ai-sdk/openai-compatible,
// @ai-sdk/anthropic, pinned). The model: dialect responses -> createOpenAI(...).responses(MODEL); chat ->
// createOpenAI(...).chat(MODEL), or with --provider openai-compatible createOpenAICompatible(...).chatModel(MODEL);
// messages -> createAnthropic({ baseURL: BASE_URL })(MODEL) (its baseURL includes /v1). maxRetries 0. Telemetry is
// opt-in (experimental_telemetry) and left off; the SDK's warnings on stderr are switched off.
//
// The SDK does not throw for a stream that goes wrong: it yields {type: 'error'} parts in fullStream (and calls
// onError), and result.text / toolCalls / finishReason still resolve (finishReason 'error' when the provider
// reported one). Those error parts, and 'tool-error' parts (a call to an unknown tool, arguments that are not
// JSON), are the outcome's `errors`; `raised` is what a user's await threw. Every function the stream calls is
// declared as a tool without `execute`, so nothing is run and there is no second request.
import { streamText, tool, jsonSchema } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { createAnthropic } from '@ai-sdk/anthropic';
import { readFileSync } from 'node:fs';
import { main, errorText, canonical, TIMEOUT_MS } from './common.mjs';

globalThis.AI_SDK_LOG_WARNINGS = false;

const argv = process.argv;
const at = argv.indexOf('--provider');
const PROVIDER = at > 0 ? argv[at + 1] : 'openai';
if (at > 0) argv.splice(at, 2);

function version(pkg) {
  const url = new URL(`./node_modules/${pkg}/package.json`, import.meta.url);
  return JSON.parse(readFileSync(url, 'utf8')).version;
}

function model(call) {
  const options = { baseURL: call.baseURL, apiKey: 'sk-oracle' };
  if (call.dialect === 'messages') return createAnthropic(options)(call.model);
  if (PROVIDER === 'openai-compatible') return createOpenAICompatible({ ...options, name: 'oracle' }).chatModel(call.model);
  const openai = createOpenAI(options);
  return call.dialect === 'chat' ? openai.chat(call.model) : openai.responses(call.model);
}

function message(error) {
  if (typeof error === 'string') return error;
  return `${error?.name ?? error?.constructor?.name ?? 'Error'}: ${String(error?.message ?? error).split('\n')[0]}`;
}

async function run(call) {
  const client = PROVIDER === 'openai-compatible' ? 'vercel-ai-compatible' : 'vercel-ai';
  const pkg = call.dialect === 'messages' ? '@ai-sdk/anthropic'
    : PROVIDER === 'openai-compatible' ? '@ai-sdk/openai-compatible' : '@ai-sdk/openai';
  const out = { client, version: `ai ${version('ai')}, ${pkg} ${version(pkg)}`, dialect: call.dialect, raised: null,
                text: null, tool_calls: [], status: null, finish_reason: null, errors: [] };
  if (PROVIDER === 'openai-compatible' && call.dialect !== 'chat') {
    out.raised = 'UnsupportedDialect: @ai-sdk/openai-compatible speaks Chat Completions';
    return out;
  }
  const tools = Object.fromEntries(call.tools.map((name) => [name, tool({
    description: name, inputSchema: jsonSchema({ type: 'object', additionalProperties: true }) })]));
  const abort = AbortSignal.timeout(TIMEOUT_MS);
  try {
    const result = streamText({ model: model(call), prompt: 'hi', maxRetries: 0, abortSignal: abort,
                                ...(call.tools.length ? { tools } : {}), onError: () => {} });
    for await (const part of result.fullStream) {
      if (part.type === 'error') out.errors.push(message(part.error));
      else if (part.type === 'tool-error') out.errors.push(`tool-error ${part.toolName}: ${message(part.error)}`);
    }
    const [text, toolCalls, finishReason] = await Promise.all([result.text, result.toolCalls, result.finishReason]);
    out.text = text === '' ? null : text;
    out.tool_calls = toolCalls.map((c) => ({ id: c.toolCallId ?? null, name: c.toolName ?? null,
      arguments: typeof c.input === 'string' ? c.input : canonical(c.input) }));
    out.finish_reason = finishReason ?? null;
  } catch (error) {
    out.raised = errorText(error);
  }
  return out;
}

await main(run);
