// The OpenAI Agents SDK for JavaScript (@openai/agents) driver: a streamed run of an agent over a loopback server.
//
//   node agents_js.mjs BASE_URL MODEL DIALECT [TOOL,NAMES]   -> one JSON outcome
//   node agents_js.mjs --batch < jobs                        -> one outcome line per job
//
// Runs in the agents-js environment (checker/oracles/pins/agents-js). The agent's model is OpenAIResponsesModel
// (dialect responses) or OpenAIChatCompletionsModel (chat) over `new OpenAI({ baseURL, maxRetries: 0 })`; tracing
// is off (setTracingDisabled(true), OPENAI_AGENTS_DISABLE_TRACING=1), so nothing is exported. The user's call is
// `const result = await run(agent, input, { stream: true })`, iterating the result, then `await result.completed`:
// a stream that fails throws there (or leaves `result.error`).
//
// Each function the stream calls is a tool of the agent (an undeclared one fails the run) with the SDK's own
// argument parsing and errorFunction null, so arguments that are not JSON fail the run as the Python driver's do
// (openai_agents_driver.py), and toolUseBehavior 'stop_on_first_tool' ends the run after the first call: no second
// model request. The outcome's text is the run's message items; its tool calls the run's tool-call items.
import { Agent, run, tool, setTracingDisabled, OpenAIResponsesModel, OpenAIChatCompletionsModel } from '@openai/agents';
import OpenAI from 'openai';
import { readFileSync } from 'node:fs';
import { main, errorText, TIMEOUT_MS } from './common.mjs';

setTracingDisabled(true);

function version(pkg) {
  return JSON.parse(readFileSync(new URL(`./node_modules/${pkg}/package.json`, import.meta.url), 'utf8')).version;
}

const VERSION = version('@openai/agents');

function textOf(item) {
  const raw = item.rawItem ?? {};
  return (raw.content ?? []).map((part) => part.text ?? part.refusal ?? '').join('');
}

async function drive(call) {
  const out = { client: 'agents-js', version: VERSION, dialect: call.dialect, raised: null, text: null,
                tool_calls: [], status: null, finish_reason: null, errors: [] };
  if (call.dialect !== 'responses' && call.dialect !== 'chat') {
    out.raised = 'UnsupportedDialect: the Agents SDK\'s OpenAI models speak Responses and Chat Completions';
    return out;
  }
  const client = new OpenAI({ baseURL: call.baseURL, apiKey: 'sk-oracle', maxRetries: 0, timeout: TIMEOUT_MS });
  const model = call.dialect === 'responses' ? new OpenAIResponsesModel(client, call.model)
    : new OpenAIChatCompletionsModel(client, call.model);
  const tools = call.tools.map((name) => tool({
    name, description: name, strict: false, errorFunction: null,
    parameters: { type: 'object', properties: {}, required: [], additionalProperties: true },
    execute: async (input) => JSON.stringify({ ok: true, input }),
  }));
  const agent = new Agent({ name: 'oracle', instructions: 'Answer.', model, tools, toolUseBehavior: 'stop_on_first_tool' });
  let result = null;
  try {
    result = await run(agent, 'hi', { stream: true, maxTurns: 2 });
    for await (const _event of result) { /* the user's loop: the events are not the result */ }
    await result.completed;
    if (result.error) throw result.error;
  } catch (error) {
    out.raised = errorText(error);
  }
  if (result) {
    const items = result.newItems ?? [];
    const texts = items.filter((i) => i.type === 'message_output_item').map(textOf);
    out.text = texts.length ? texts.join('') : null;
    for (const item of items.filter((i) => i.type === 'tool_call_item')) {
      const raw = item.rawItem ?? {};
      out.tool_calls.push({ id: raw.callId ?? raw.id ?? null, name: raw.name ?? null, arguments: raw.arguments ?? null });
    }
    // A tool that could not run (its arguments did not parse) answers the model with the error text instead of
    // failing the run: what the user's tool got is the error, surfaced here.
    for (const item of items.filter((i) => i.type === 'tool_call_output_item')) {
      const output = typeof item.output === 'string' ? item.output : JSON.stringify(item.output);
      if (!String(output).startsWith('{"ok":true')) out.errors.push(`tool output: ${String(output).slice(0, 300)}`);
    }
  }
  return out;
}

await main(drive);
