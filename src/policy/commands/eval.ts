/**
 * `portcullis policy eval [-d FILE|DIR]... [-i INPUT.json] [--v0-compatible] [--format json|pretty] QUERY`:
 * evaluates a query as `opa eval` does and prints `{"result":[{"expressions":[…],"bindings":{…}}]}`
 * (`{}` when the query is undefined). Errors print as `{"errors":[{code,message,location}]}`, exit 1.
 */
import { readFile } from 'node:fs/promises';
import { Command, Option } from 'commander';
import { CommandError, UsageError } from '../../common/errors.js';
import { compile, RegoError, RegoErrors, type CompiledPolicy, type QueryResult } from '../../rego/index.js';
import { parseJson } from '../json.js';
import { loadPaths } from '../loader.js';

interface EvalFlags {
  data: string[];
  input?: string;
  v0Compatible?: boolean;
  format: 'json' | 'pretty';
}

const collect = (value: string, previous: string[]) => [...previous, value];

export function evalCommand(): Command {
  return new Command('eval')
    .summary('evaluate a Rego query')
    .description('Evaluate a Rego query against policy and data files and print the result as opa eval does.')
    .argument('<query>', 'the Rego query, e.g. data.httpapi.authz.allow')
    .option('-d, --data <path>', 'policy (.rego) or data (.json, .yaml) file or directory (repeatable)', collect, [])
    .option('-i, --input <file>', 'input document (JSON or YAML)')
    .option('--v0-compatible', 'parse modules and query as Rego v0')
    .addOption(new Option('-f, --format <format>', 'output format').choices(['json', 'pretty']).default('json'))
    .action(async (query: string, flags: EvalFlags) => {
      const version = flags.v0Compatible ? 'v0' : 'v1';
      let result: QueryResult;
      try {
        const { policy, data } = await loadPolicy(flags.data, version);
        const input = flags.input === undefined ? undefined : await readInput(flags.input);
        result = policy.prepareQuery(query, { regoVersion: version }).eval({ data, ...(input !== undefined ? { input } : {}) });
      } catch (error) {
        if (error instanceof RegoErrors || error instanceof RegoError) {
          process.stdout.write(formatErrors(error) + '\n');
          throw new CommandError(`policy eval: ${error instanceof RegoErrors ? error.errors.length : 1} error(s)`, 1);
        }
        throw error;
      }
      process.stdout.write((flags.format === 'pretty' ? pretty(result) : stringify(evalOutput(result), 2)) + '\n');
    });
}

/** Loads `.rego` modules and data files; compiles the modules. Shared by eval, test and check. */
export async function loadPolicy(paths: readonly string[], version: 'v0' | 'v1'): Promise<{ policy: CompiledPolicy; data: Record<string, unknown> }> {
  const loaded = await loadPaths(paths, { bundleMode: false, ignore: [] });
  const data: Record<string, unknown> = {};
  for (const { path, value } of loaded.data) mergeAt(data, path, value);
  const policy = compile(
    loaded.modules.map((m) => ({ id: m.id, text: m.raw })),
    { regoVersion: version },
  );
  return { policy, data };
}

function mergeAt(root: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = root;
  for (const key of path) {
    const next = node[key];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) {
      const cur = node[k];
      if (typeof cur === 'object' && cur !== null && !Array.isArray(cur) && typeof v === 'object' && v !== null && !Array.isArray(v)) {
        mergeAt(node, [k], v);
      } else node[k] = v;
    }
  } else if (path.length > 0) {
    const parent = path.slice(0, -1).reduce<Record<string, unknown>>((n, k) => n[k] as Record<string, unknown>, root);
    parent[path[path.length - 1]!] = value;
  }
}

async function readInput(file: string): Promise<unknown> {
  const text = await readFile(file, 'utf8').catch(() => {
    throw new UsageError(`policy eval: cannot read input file ${file}`);
  });
  try {
    return parseJson(text);
  } catch {
    const { parse } = await import('yaml');
    try {
      return parse(text, { intAsBigInt: true });
    } catch {
      throw new UsageError(`policy eval: ${file}: not JSON or YAML`);
    }
  }
}

function evalOutput(result: QueryResult): unknown {
  return result.results.length ? { result: result.results } : {};
}

/** OPA's error output: `{"errors":[{"code","message","location"}]}`. */
export function formatErrors(error: RegoError | RegoErrors): string {
  const errors = error instanceof RegoErrors ? error.errors : [error];
  return stringify({ errors: errors.map((e) => e.toJSON()) }, 2);
}

/** `--format pretty`: the value alone for a single expression without bindings, else a table. */
function pretty(result: QueryResult): string {
  if (result.results.length === 0) return 'undefined';
  const first = result.results[0]!;
  if (result.results.length === 1 && Object.keys(first.bindings).length === 0 && first.expressions.length === 1) {
    return stringify(first.expressions[0]!.value, 2);
  }
  const columns = Object.keys(first.bindings);
  if (columns.length === 0) return result.results.map((r) => r.expressions.map((e) => stringify(e.value)).join(' ')).join('\n');
  const rows = result.results.map((r) => columns.map((c) => stringify(r.bindings[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...rows.map((r) => r[i]!.length)));
  const line = '+' + widths.map((w) => '-'.repeat(w + 2)).join('+') + '+';
  const fmt = (cells: string[]) => '| ' + cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ') + ' |';
  return [line, fmt(columns), line, ...rows.map(fmt), line].join('\n');
}

/** JSON.stringify that writes bigint results exactly. */
export function stringify(value: unknown, indent?: number): string {
  const marks: string[] = [];
  const text = JSON.stringify(
    value,
    (_k, v) => {
      if (typeof v === 'bigint') {
        marks.push(v.toString());
        return `\u0000bigint${marks.length - 1}\u0000`;
      }
      return v;
    },
    indent,
  );
  return text.replace(/"\\u0000bigint(\d+)\\u0000"/g, (_m, i: string) => marks[Number(i)]!);
}
