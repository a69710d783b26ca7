/**
 * The Rego library: parse and compile modules once, prepare queries once, evaluate them many times.
 * No I/O, no server code. JSON in, JSON out at this boundary:
 *
 * - Inputs (`input`, `data`) are plain JSON values; integers beyond 2^53 may be given as `bigint`.
 * - Outputs are plain JSON values; numbers a double cannot hold exactly come out as `bigint`
 *   (integers) — decimals beyond a double's precision are rounded to the nearest double. Sets come
 *   out as arrays in OPA's sort order.
 * - Every failure is a `RegoErrors` (parse/compile, all errors at once) or a `RegoError`
 *   (evaluation) carrying OPA's code and, where known, a location.
 */
import { compileModules } from './compiler/compile.js';
import type { Program } from './compiler/program.js';
import { RegoError, RegoErrors } from './errors.js';
import { Evaluation, type EvalSettings, type TraceEvent } from './eval/evaluator.js';
import { CompiledQuery, guardEval, type Solution } from './query.js';
import type { Module as ModuleAst } from './syntax/ast.js';
import { parseModule as parseModuleText } from './syntax/parser.js';
import { fromJSON, RegoObject, toJSON, type Value } from './value/index.js';

export { RegoError, RegoErrors } from './errors.js';
export type { Location, Module as ModuleAst } from './syntax/ast.js';

export interface ModuleSource {
  readonly id: string;
  readonly text: string;
}

export interface CompileOptions {
  /** Default 'v1'; 'v0' = OPA's --v0-compatible. A module that imports rego.v1 is v1 either way. */
  regoVersion?: 'v0' | 'v1';
  strict?: boolean;
}

export interface EvalOptions {
  input?: unknown;
  data?: unknown;
  strictBuiltinErrors?: boolean;
  /** Date.now() ms; past it → RegoError eval_cancel_error. */
  deadline?: number;
  explain?: 'notes' | 'fails' | 'full';
  metrics?: boolean;
  printHook?: (message: string) => void;
  /** ns since epoch for time.now_ns (default: now, fixed per evaluation). */
  time?: bigint;
}

export interface QueryResult {
  results: Array<{ expressions: Array<{ value: unknown; text: string; location: { row: number; col: number } }>; bindings: Record<string, unknown> }>;
  defined?: boolean;
  value?: unknown;
  explanation?: string[];
  metrics?: Record<string, number>;
}

export interface PreparedQuery {
  eval(options?: EvalOptions): QueryResult;
}

export interface CompiledPolicy {
  readonly modules: ReadonlyMap<string, ModuleAst>;
  prepareQuery(query: string, options?: { regoVersion?: 'v0' | 'v1' }): PreparedQuery;
  prepareRef(path: readonly string[]): PreparedQuery;
}

/** Parses one module; throws RegoErrors (rego_parse_error) with file, row and column. */
export function parseModule(source: ModuleSource, options: CompileOptions = {}): ModuleAst {
  return parseModuleText(source.id, source.text, options.regoVersion ?? 'v1');
}

/** Parses and compiles a set of modules, reporting every error at once. */
export function compile(modules: readonly ModuleSource[], options: CompileOptions = {}): CompiledPolicy {
  const asts = new Map<string, ModuleAst>();
  const errors: RegoError[] = [];
  for (const m of modules) {
    try {
      asts.set(m.id, parseModule(m, options));
    } catch (e) {
      if (e instanceof RegoErrors) errors.push(...e.errors);
      else throw e;
    }
  }
  if (errors.length) throw new RegoErrors(errors);
  const program = guardCompile(() => compileModules(asts, { strict: !!options.strict }));
  return new Policy(program, asts, options);
}

function guardCompile<T>(run: () => T): T {
  try {
    return run();
  } catch (e) {
    if (e instanceof RegoErrors) throw e;
    if (e instanceof RegoError) throw new RegoErrors([e]);
    throw new RegoErrors([new RegoError('rego_compile_error', e instanceof Error ? e.message : String(e))]);
  }
}

class Policy implements CompiledPolicy {
  constructor(
    readonly program: Program,
    readonly modules: ReadonlyMap<string, ModuleAst>,
    private readonly options: CompileOptions,
  ) {}

  prepareQuery(query: string, options: { regoVersion?: 'v0' | 'v1' } = {}): PreparedQuery {
    const compiled = guardCompile(() => CompiledQuery.compile(this.program, query, options.regoVersion ?? this.options.regoVersion ?? 'v1'));
    return {
      eval: (opts = {}) => {
        const started = process.hrtime.bigint();
        const { settings, explanation } = evalSettings(opts);
        const solutions = compiled.run(settings);
        const result: QueryResult = { results: solutions.map(solutionToJS) };
        if (explanation) result.explanation = explanation;
        if (opts.metrics) result.metrics = { timer_rego_query_eval_ns: Number(process.hrtime.bigint() - started) };
        return result;
      },
    };
  }

  prepareRef(path: readonly string[]): PreparedQuery {
    const program = this.program;
    let node = program.root;
    const rest: string[] = [];
    for (const p of path) {
      const child = rest.length === 0 ? node.children.get(p) : undefined;
      if (child) node = child;
      else rest.push(p);
    }
    const text = ['data', ...path].join('.');
    return {
      eval: (opts = {}) => {
        const started = process.hrtime.bigint();
        const { settings, explanation } = evalSettings(opts);
        const ev = new Evaluation(program, settings);
        let value = guardEval(() => {
          let base: Value | undefined = settings.data;
          for (const p of node.path) base = base instanceof RegoObject ? base.get(p) : undefined;
          return ev.nodeValue(node, base);
        });
        for (const p of rest) value = value instanceof RegoObject ? value.get(p) : undefined;
        const result: QueryResult = { results: [], defined: value !== undefined };
        if (value !== undefined) {
          const js = toJS(value);
          result.value = js;
          result.results.push({ expressions: [{ value: js, text, location: { row: 1, col: 1 } }], bindings: {} });
        }
        if (explanation) result.explanation = explanation;
        if (opts.metrics) result.metrics = { timer_rego_query_eval_ns: Number(process.hrtime.bigint() - started) };
        return result;
      },
    };
  }
}

const dataCache = new WeakMap<object, RegoObject>();

/** Converts the caller's data once per distinct object (the policy server passes the same store). */
function dataValue(data: unknown): RegoObject {
  if (data === undefined || data === null) return new RegoObject();
  if (typeof data === 'object') {
    const hit = dataCache.get(data);
    if (hit) return hit;
  }
  const v = fromJSON(data);
  if (!(v instanceof RegoObject)) throw new RegoError('eval_internal_error', 'data must be an object');
  if (typeof data === 'object') dataCache.set(data, v);
  return v;
}

function evalSettings(opts: EvalOptions): { settings: EvalSettings; explanation?: string[] } {
  let explanation: string[] | undefined;
  let trace: ((e: TraceEvent) => void) | undefined;
  if (opts.explain) {
    explanation = [];
    const mode = opts.explain;
    const lines = explanation;
    trace = (e) => {
      if (mode === 'full' || (mode === 'fails' && e.op === 'fail') || (mode === 'notes' && e.op === 'note')) {
        lines.push(`${'| '.repeat(e.depth)}${e.op === 'eval' ? 'Eval' : e.op === 'fail' ? 'Fail' : e.op === 'note' ? 'Note' : e.op} ${e.text}`);
      }
    };
  }
  const settings: EvalSettings = {
    data: guardEval(() => dataValue(opts.data)),
    ...(opts.input !== undefined ? { input: guardEval(() => fromJSON(opts.input)) } : {}),
    ...(opts.strictBuiltinErrors ? { strictBuiltinErrors: true } : {}),
    ...(opts.deadline !== undefined ? { deadline: opts.deadline } : {}),
    ...(opts.printHook ? { printHook: opts.printHook } : {}),
    ...(opts.time !== undefined ? { timeNs: opts.time } : {}),
    ...(trace ? { trace } : {}),
  };
  return explanation ? { settings, explanation } : { settings };
}

function solutionToJS(s: Solution): QueryResult['results'][number] {
  const bindings: Record<string, unknown> = {};
  for (const [k, v] of s.bindings) bindings[k] = toJS(v);
  return { expressions: s.expressions.map((e) => ({ value: toJS(e.value), text: e.text, location: e.location })), bindings };
}

/** A Rego value as plain JSON (big integers as bigint, sets as sorted arrays). */
export function toJS(v: Value): unknown {
  return toJSON(v, { exactIntegers: true });
}

/** Internal entry points for the CLI and the conformance runner (values stay Rego values). */
export { CompiledQuery } from './query.js';
export { parseTerm, parseQuery } from './syntax/parser.js';
export { Program };
export function programOf(policy: CompiledPolicy): Program {
  return (policy as Policy).program;
}
