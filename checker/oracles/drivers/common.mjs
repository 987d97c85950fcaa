// The driver protocol's Node side (checker/oracles/protocol.py says it in full): parse
// `DRIVER BASE_URL MODEL DIALECT [TOOL,NAMES]` (or, with --batch, one line per job on stdin:
// `BASE_URL MODEL DIALECT TOOLS REQUEST_JSON`) and print one normalised outcome, a JSON object, per job.
import { createInterface } from 'node:readline';

// A failing helper may also reject promises nobody awaits; the outcome is recorded by the driver.
process.on('unhandledRejection', () => {});

export const TIMEOUT_MS = Math.round(Number(process.env.SSE_CHECK_ORACLE_TIMEOUT || '20') * 1000);

export function errorText(error) {
  const name = error?.constructor?.name ?? 'Error';
  return `${name}: ${String(error?.message ?? error).split('\n')[0]}`;
}

export function canonical(value) {
  // JSON with sorted keys and Python's separators: what checker.oracles.anthropic_python.canonical writes.
  if (Array.isArray(value)) return '[' + value.map(canonical).join(',') + ']';
  if (value && typeof value === 'object') {
    return '{' + Object.keys(value).sort().map((k) => JSON.stringify(k) + ':' + canonical(value[k])).join(',') + '}';
  }
  return value === undefined ? 'null' : JSON.stringify(value);
}

function parseTools(word) {
  return word && word !== '-' ? word.split(',').filter(Boolean) : [];
}

// run(call) -> outcome object; call = {baseURL, model, dialect, tools, request}
export async function main(run) {
  const args = process.argv.slice(2);
  if (args[0] !== '--batch') {
    if (args.length < 3) {
      process.stderr.write('usage: DRIVER BASE_URL MODEL DIALECT [TOOL,NAMES]\n');
      process.exit(2);
    }
    let request = {};
    try { request = JSON.parse(process.env.SSE_CHECK_ORACLE_REQUEST || '{}') ?? {}; } catch { request = {}; }
    const outcome = await run({ baseURL: args[0], model: args[1], dialect: args[2], tools: parseTools(args[3]),
                                request });
    process.stdout.write(JSON.stringify(outcome) + '\n');
    process.exit(0);
  }
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    const [baseURL, model, dialect, tools, ...rest] = line.split(' ');
    let request = {};
    try { request = JSON.parse(rest.join(' ') || '{}') ?? {}; } catch { request = {}; }
    const outcome = await run({ baseURL, model, dialect, tools: parseTools(tools), request });
    process.stdout.write(JSON.stringify(outcome) + '\n');
  }
  process.exit(0);
}
