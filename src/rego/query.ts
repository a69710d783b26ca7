import { RegoError, RegoErrors } from './errors.js';
import { Frame, Lowerer } from './compiler/lower.js';
import { resolverFor } from './compiler/compile.js';
import type { Body } from './compiler/ir.js';
import type { Program } from './compiler/program.js';
import { reorderBody } from './compiler/safety.js';
import { checkBodyCalls } from './compiler/typecheck.js';
import { Evaluation, type EvalSettings, type TraceEvent } from './eval/evaluator.js';
import type { Location } from './syntax/ast.js';
import { parseQuery, type RegoVersion } from './syntax/parser.js';
import type { Value } from './value/index.js';

/** One solution of a query: each expression's value (source order) and each query variable's. */
export interface Solution {
  expressions: Array<{ value: Value; text: string; location: { row: number; col: number } }>;
  bindings: Map<string, Value>;
}

/** A query compiled against a program; evaluate it many times. */
export class CompiledQuery {
  private constructor(
    private readonly program: Program,
    readonly body: Body,
    private readonly frameSize: number,
    private readonly vars: ReadonlyArray<[string, number]>,
  ) {}

  static compile(program: Program, text: string, version: RegoVersion = 'v1'): CompiledQuery {
    const ast = parseQuery(text, version);
    const resolver = resolverFor({ program }, undefined, 'query', new Set());
    const lowerer = new Lowerer(resolver);
    const frame = new Frame();
    const scope = lowerer.openScope(ast, frame, undefined);
    const body = lowerer.body(ast, scope);
    const errors = [...lowerer.errors];
    const ordered = reorderBody(body, new Set(), errors);
    checkBodyCalls(ordered, errors);
    if (errors.length) throw new RegoErrors(errors);
    // Expression texts, from each expression's start to the next one's.
    const offsets = ast.map((e) => offsetOf(text, e.location));
    body.forEach((e) => {
      const start = offsets[e.index] ?? 0;
      const end = offsets[e.index + 1] ?? text.length;
      e.text = text.slice(start, end).trim().replace(/;$/, '').trim();
    });
    const vars = [...scope.vars.entries()].filter(([name]) => name !== '_' && !name.startsWith('__')) as Array<[string, number]>;
    return new CompiledQuery(program, ordered, frame.size, vars);
  }

  /** Calls `onSolution` for each solution; returns the solutions (bindings and expression values). */
  run(settings: EvalSettings): Solution[] {
    const ev = new Evaluation(this.program, settings);
    const f: (Value | undefined)[] = new Array(this.frameSize);
    const out: Solution[] = [];
    const sorted = [...this.body].sort((a, b) => a.index - b.index);
    guardEval(() =>
      ev.query(this.body, f, () => {
        const bindings = new Map<string, Value>();
        for (const [name, slot] of this.vars) {
          const v = f[slot];
          if (v !== undefined) bindings.set(name, v);
        }
        const expressions = sorted.map((e) => {
          let value: Value = true;
          if (!e.negated && e.lit.k === 'term') value = ev.once(e.lit.t, f) ?? true;
          else if (!e.negated && e.lit.k === 'call' && !e.lit.out && !e.with) {
            const lit = e.lit;
            value = ev.once({ k: 'call', fn: lit.fn, args: lit.args }, f) ?? true;
          }
          return { value, text: e.text, location: { row: e.loc.row, col: e.loc.col } };
        });
        out.push({ expressions, bindings });
        return false;
      }),
    );
    return out;
  }
}

/** Runs an evaluation, turning anything that is not a RegoError into one (never an untyped throw). */
export function guardEval<T>(run: () => T): T {
  try {
    return run();
  } catch (e) {
    if (e instanceof RegoError || e instanceof RegoErrors) throw e;
    if (e instanceof RangeError) throw new RegoError('eval_internal_error', `evaluation exceeded the stack: ${e.message}`);
    throw new RegoError('eval_internal_error', e instanceof Error ? e.message : String(e));
  }
}

function offsetOf(text: string, loc: Location | undefined): number {
  if (!loc) return 0;
  let row = 1;
  let i = 0;
  while (row < loc.row && i < text.length) {
    if (text[i] === '\n') row++;
    i++;
  }
  return i + loc.col - 1;
}

export type { TraceEvent };
