/**
 * Runs Rego compliance cases in OPA's YAML format (`cases:` lists; see
 * ../shared/conformance/README.md) and judges them as OPA's own harness does: the result is the set
 * of binding rows, compared as unordered sets with numbers by value; `want_error` is a substring of
 * the error, `want_error_code` its code; `sort_bindings` sorts array-valued bindings first.
 * Cases in the skip list are not run and are reported with their reason.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { compile, CompiledQuery, parseTerm, programOf, RegoError, RegoErrors } from '../../rego/index.js';
import { compare, equals, fromJSON, RegoObject, RegoSet, stringifyJSON, type Value } from '../../rego/value/index.js';
import { skipReason } from './skips.js';

export interface ConformanceCase {
  note: string;
  query: string;
  modules?: string[];
  data?: unknown;
  input?: unknown;
  input_term?: string;
  env?: Record<string, string>;
  want_result?: Array<Record<string, unknown>>;
  want_error?: string;
  want_error_code?: string;
  strict_error?: boolean;
  sort_bindings?: boolean;
  ignore_generated_vars?: boolean;
}

export interface CaseOutcome {
  file: string;
  note: string;
  status: 'passed' | 'failed' | 'skipped';
  /** Why it failed, or why it was skipped. */
  reason?: string;
}

export interface SuiteSummary {
  outcomes: CaseOutcome[];
  passed: number;
  failed: number;
  skipped: number;
}

/** Every case file under the given files or directories, sorted. */
export function caseFiles(roots: readonly string[]): string[] {
  const out: string[] = [];
  const visit = (p: string): void => {
    const info = statSync(p);
    if (info.isDirectory()) {
      for (const name of readdirSync(p).sort()) visit(path.join(p, name));
    } else if (/\.ya?ml$/.test(p)) out.push(p);
  };
  for (const r of roots) visit(r);
  return out;
}

/** The dialect of a case file: `opa/v0/` paths are v0, otherwise the file's `rego_version` (default v1). */
export function dialectOf(file: string, doc: { rego_version?: unknown }): 'v0' | 'v1' {
  const norm = file.split(path.sep).join('/');
  if (norm.includes('/v0/')) return 'v0';
  if (norm.includes('/v1/')) return 'v1';
  return doc.rego_version === 'v0' ? 'v0' : 'v1';
}

export function runSuites(roots: readonly string[], onOutcome?: (o: CaseOutcome) => void): SuiteSummary {
  const outcomes: CaseOutcome[] = [];
  for (const file of caseFiles(roots)) {
    const doc = YAML.parse(readFileSync(file, 'utf8'), { intAsBigInt: true }) as { cases?: ConformanceCase[]; rego_version?: unknown };
    const version = dialectOf(file, doc);
    const shown = displayName(file);
    for (const c of doc.cases ?? []) {
      const skip = skipReason(shown, c);
      const outcome: CaseOutcome = skip
        ? { file: shown, note: c.note, status: 'skipped', reason: skip }
        : { file: shown, note: c.note, ...judge(c, version) };
      outcomes.push(outcome);
      onOutcome?.(outcome);
    }
  }
  const count = (s: CaseOutcome['status']) => outcomes.filter((o) => o.status === s).length;
  return { outcomes, passed: count('passed'), failed: count('failed'), skipped: count('skipped') };
}

/** The path from the suite folder (`opa/…`, `regorus/…`, `regocpp/…`) when recognisable. */
function displayName(file: string): string {
  const norm = file.split(path.sep).join('/');
  const m = /(?:^|\/)((?:opa|regorus|regocpp)\/.*)$/.exec(norm);
  return m ? m[1]! : norm;
}

/** Judges one case. */
export function judge(c: ConformanceCase, version: 'v0' | 'v1'): { status: 'passed' | 'failed'; reason?: string } {
  const savedEnv: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(c.env ?? {})) {
    savedEnv[k] = process.env[k];
    process.env[k] = String(v);
  }
  try {
    const wantsError = c.want_error !== undefined || c.want_error_code !== undefined;
    let rows: Value[];
    try {
      rows = evaluate(c, version);
    } catch (e) {
      if (!(e instanceof RegoError || e instanceof RegoErrors)) {
        return { status: 'failed', reason: `crashed: ${e instanceof Error ? (e.stack ?? e.message).split('\n').slice(0, 3).join(' | ') : String(e)}` };
      }
      if (!wantsError) return { status: 'failed', reason: `unexpected error: ${firstLine(e.message, e)}` };
      const codes = e instanceof RegoErrors ? e.errors.map((x) => x.code) : [e.code];
      if (c.want_error_code !== undefined && !codes.includes(c.want_error_code)) {
        return { status: 'failed', reason: `want error code ${c.want_error_code}, got ${codes.join(', ')}: ${firstLine(e.message, e)}` };
      }
      if (c.want_error !== undefined && !e.message.includes(c.want_error)) {
        return { status: 'failed', reason: `want error containing ${JSON.stringify(c.want_error)}, got: ${firstLine(e.message, e)}` };
      }
      return { status: 'passed' };
    }
    if (wantsError) return { status: 'failed', reason: `want error ${c.want_error_code ?? ''} ${JSON.stringify(c.want_error ?? '')}, got ${rows.length} result(s)` };
    if (c.want_result === undefined) return { status: 'failed', reason: 'case has none of want_result, want_error, want_error_code' };
    const expected = new RegoSet(c.want_result.map((row) => fromJSON(row ?? {})));
    const actual = new RegoSet(rows);
    if (equals(expected, actual)) return { status: 'passed' };
    return { status: 'failed', reason: `want ${render(expected)}, got ${render(actual)}` };
  } finally {
    for (const [k, v] of Object.entries(savedEnv)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

function firstLine(message: string, e: RegoError | RegoErrors): string {
  if (e instanceof RegoErrors) return e.errors.map((x) => x.message).join('; ');
  return message.split('\n')[0]!;
}

function evaluate(c: ConformanceCase, version: 'v0' | 'v1'): Value[] {
  const modules = (c.modules ?? []).map((text, i) => ({ id: `test-${i}.rego`, text }));
  const policy = compile(modules, { regoVersion: version });
  const program = programOf(policy);
  let input: Value | undefined;
  if (c.input_term !== undefined) {
    parseTerm(c.input_term);
    const q = CompiledQuery.compile(program, `__input_term__ = ${c.input_term}`, 'v1');
    const s = q.run({ data: new RegoObject() });
    input = s[0]?.expressions.length ? evalInputTerm(program, c.input_term) : undefined;
  } else if (c.input !== undefined) input = fromJSON(c.input);
  const data = c.data === undefined || c.data === null ? new RegoObject() : fromJSON(c.data);
  const query = CompiledQuery.compile(program, c.query, version);
  const solutions = query.run({
    data: data instanceof RegoObject ? data : new RegoObject(),
    ...(input !== undefined ? { input } : {}),
    strictBuiltinErrors: !!c.strict_error,
    printHook: () => {},
  });
  return solutions.map((s) => {
    const row = new RegoObject();
    for (const [name, value] of s.bindings) {
      if (c.ignore_generated_vars && name.startsWith('__localq')) continue;
      let v = asJSONValue(value);
      if (c.sort_bindings && Array.isArray(v)) v = [...(v as Value[])].sort(compare);
      row.set(name, v);
    }
    return row;
  });
}

function evalInputTerm(program: ReturnType<typeof programOf>, term: string): Value | undefined {
  const q = CompiledQuery.compile(program, `x := ${term}`, 'v1');
  const s = q.run({ data: new RegoObject() });
  return s[0]?.bindings.get('x');
}

/** A value as OPA's JSON renders it, kept as a Rego value: sets → sorted arrays, keys → strings. */
function asJSONValue(v: Value): Value {
  if (v instanceof RegoSet) return v.values().map(asJSONValue);
  if (Array.isArray(v)) return v.map(asJSONValue);
  if (v instanceof RegoObject) {
    const o = new RegoObject();
    for (const [k, w] of v.entries()) o.set(typeof k === "string" ? k : stringifyJSON(k), asJSONValue(w));
    return o;
  }
  return v;
}

function render(v: Value): string {
  const text = JSON.stringify(v, (_k, x) => (x instanceof RegoSet ? x.values() : x instanceof RegoObject ? Object.fromEntries(x.entries().map(([a, b]) => [typeof a === 'string' ? a : JSON.stringify(a), b])) : typeof x === 'bigint' ? x.toString() : x));
  return text.length > 300 ? text.slice(0, 300) + '…' : text;
}
