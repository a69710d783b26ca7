import { builtins, createBuiltinContext, invoke, invokeRelation, BuiltinError, UnsupportedBuiltinError, type BuiltinContext } from '../builtins/index.js';
import { RegoError } from '../errors.js';
import type { Location } from '../syntax/ast.js';
import { equals, fromJSON, keyOf, RegoObject, RegoSet, stringifyJSON, type Value } from '../value/index.js';
import { parseModule } from '../syntax/parser.js';
import { isInteger, toSafeInteger, type RegoNumber } from '../value/number.js';
import type { Body, Callee, Expr, Rule, Term, With } from '../compiler/ir.js';
import type { DataNode, Program, RuleSet } from '../compiler/program.js';

/** Continuation: called once per solution; returning true stops the search. */
type K = () => boolean;
type KV = (v: Value) => boolean;
type Frame = (Value | undefined)[];

export interface EvalSettings {
  input?: Value;
  data: RegoObject;
  strictBuiltinErrors?: boolean;
  deadline?: number;
  printHook?: (message: string) => void;
  timeNs?: bigint;
  env?: Record<string, string | undefined>;
  trace?: (event: TraceEvent) => void;
}

export interface TraceEvent {
  op: 'eval' | 'fail' | 'enter' | 'exit' | 'note';
  text: string;
  loc?: Location;
  depth: number;
}

interface Mock {
  value?: Value;
  replacement?: Callee;
}

interface EvalContext {
  input: Value | undefined;
  overrides: Map<string, Value> | undefined;
  mocks: Map<string, Mock> | undefined;
  cache: Map<object, Value | typeof UNDEF>;
}

/** Marks a term that needs the general (iterating) evaluation path. */
const NOT_SIMPLE = Symbol('not simple');

/** The sentinel cached for rule sets whose document is undefined. */
const UNDEF = Symbol('undefined');

/**
 * One query evaluation: OPA's top-down semantics with continuation-passing backtracking. Rule
 * documents are computed on demand and cached for the evaluation (a `with` that changes input,
 * data or functions evaluates under a fresh cache).
 */
export class Evaluation {
  private input: Value | undefined;
  private base: RegoObject;
  private cache = new Map<object, Value | typeof UNDEF>();
  private dataOverrides: Map<string, Value> | undefined;
  private mocks: Map<string, Mock> | undefined;
  private builtinContext: BuiltinContext | undefined;
  private readonly settings: EvalSettings;
  private steps = 0;
  /** Where the evaluation was when it last checked the deadline (the location of a cancellation). */
  private lastLoc: Location | undefined;
  private readonly deadline: number | undefined;
  private depth = 0;
  private readonly trace: ((e: TraceEvent) => void) | undefined;
  private readonly inProgress = new Set<object>();
  /** The rule whose body is being evaluated (for rego.metadata.*). */
  private currentRule: Rule | undefined;

  constructor(
    private readonly program: Program,
    settings: EvalSettings,
  ) {
    this.input = settings.input;
    this.base = settings.data;
    this.deadline = settings.deadline;
    this.trace = settings.trace;
    this.settings = settings;
  }

  /** The builtins' view of this evaluation, created on the first builtin call. */
  private get ctx(): BuiltinContext {
    if (this.builtinContext) return this.builtinContext;
    const settings = this.settings;
    this.builtinContext = createBuiltinContext({
      strictBuiltinErrors: !!settings.strictBuiltinErrors,
      ...(settings.timeNs !== undefined ? { timeNs: settings.timeNs } : {}),
      env: settings.env ?? process.env,
      checkCancelled: () => this.checkDeadline(),
      print: settings.printHook ?? ((line) => process.stderr.write(line + '\n')),
      hooks: {
        metadataRule: () => this.currentRule?.metadata.rule ?? new RegoObject(),
        metadataChain: () => this.currentRule?.metadata.chain ?? [],
        trace: (note: string) => this.trace?.({ op: 'note', text: note, depth: this.depth }),
        parseModule: (filename, source) => fromJSON(JSON.parse(JSON.stringify(parseModule(filename, source, 'v1')))),
      },
    });
    return this.builtinContext;
  }

  private checkDeadline(): void {
    if (this.deadline !== undefined && Date.now() > this.deadline) {
      throw new RegoError('eval_cancel_error', 'caller cancelled query execution', this.lastLoc);
    }
  }

  // ---- bodies ----

  /** Evaluates a query body; `k` is called with the frame bound for each solution. */
  query(body: Body, frame: Frame, k: K): void {
    this.body(body, 0, frame, k);
  }

  body(body: Body, i: number, f: Frame, k: K): boolean {
    if (i === body.length) return k();
    const e = body[i]!;
    if ((++this.steps & 1023) === 0) {
      this.lastLoc = e.loc;
      this.checkDeadline();
    }
    if (this.trace) this.trace({ op: 'eval', text: e.text, loc: e.loc, depth: this.depth });
    if (e.with) return this.withModifiers(e, e.with, f, () => this.body(body, i + 1, f, k));
    return this.expr(e, f, () => this.body(body, i + 1, f, k));
  }

  private expr(e: Expr, f: Frame, k: K): boolean {
    if (e.negated) {
      const found = this.literal(e, f, () => true);
      if (found) {
        if (this.trace) this.trace({ op: 'fail', text: e.text, loc: e.loc, depth: this.depth });
        return false;
      }
      return k();
    }
    const r = this.literal(e, f, k);
    return r;
  }

  private literal(e: Expr, f: Frame, k: K): boolean {
    const lit = e.lit;
    switch (lit.k) {
      case 'term':
        return this.term(lit.t, f, (v) => v !== false && k());
      case 'unify':
        return this.unifyTerms(lit.a, lit.b, f, k);
      case 'call':
        if (lit.fn.k === 'builtin' && (lit.fn.name === 'print' || lit.fn.name === 'internal.print') && !this.mocks?.has(lit.fn.name)) {
          this.printCall(lit.args, f);
          return k();
        }
        if (!lit.out && lit.fn.k === 'builtin' && !this.mocks && (lit.fn.name === 'equal' || lit.fn.name === 'neq')) {
          // The commonest test, without continuations when both sides have one value.
          const a = this.simple(lit.args[0]!, f);
          const b = a === NOT_SIMPLE || a === undefined ? a : this.simple(lit.args[1]!, f);
          if (a !== NOT_SIMPLE && b !== NOT_SIMPLE) {
            if (a === undefined || b === undefined) return false;
            return equals(a, b) === (lit.fn.name === 'equal') && k();
          }
        }
        return this.terms(lit.args, f, (args) =>
          this.call(lit.fn, args, e.loc, (result) => {
            if (lit.out) return this.unify(lit.out, result, f, k);
            return result !== false && k();
          }),
        );
      case 'somein':
        return this.term(lit.domain, f, (coll) =>
          this.forEachMember(coll, (key, value) => {
            if (lit.key) return this.unify(lit.key, key, f, () => this.unify(lit.value, value, f, k));
            return this.unify(lit.value, value, f, k);
          }),
        );
      case 'every':
        return this.term(lit.domain, f, (coll) => {
          if (!(Array.isArray(coll) || coll instanceof RegoObject || coll instanceof RegoSet)) return false;
          let all = true;
          this.forEachMember(coll, (key, value) => {
            const ok = lit.key
              ? this.unify(lit.key, key, f, () => this.unify(lit.value, value, f, () => this.body(lit.body, 0, f, () => true)))
              : this.unify(lit.value, value, f, () => this.body(lit.body, 0, f, () => true));
            if (!ok) all = false;
            return !ok;
          });
          return all && k();
        });
    }
  }

  /** Iterates a collection's (key, value) pairs; sets yield (member, member). Scalars yield nothing. */
  private forEachMember(coll: Value, k: (key: Value, value: Value) => boolean): boolean {
    if (Array.isArray(coll)) {
      for (let i = 0; i < coll.length; i++) if (k(i, coll[i]!)) return true;
    } else if (coll instanceof RegoObject) {
      for (const [key, value] of coll.entries()) if (k(key, value)) return true;
    } else if (coll instanceof RegoSet) {
      for (const m of coll.values()) if (k(m, m)) return true;
    }
    return false;
  }

  // ---- with ----

  /**
   * Evaluates an expression under its `with` modifiers. The modified input, data and functions
   * (and a fresh rule cache) hold only while the expression itself is evaluated: the continuation
   * runs in the outer context.
   */
  private withModifiers(e: Expr, mods: With[], f: Frame, k: K): boolean {
    return this.terms(
      mods.map((m) => m.value),
      f,
      (values) => {
        const outer = this.context();
        let input = this.input;
        let overrides = this.dataOverrides ? new Map(this.dataOverrides) : undefined;
        let mocks = this.mocks ? new Map(this.mocks) : undefined;
        mods.forEach((m, i) => {
          const v = values[i]!;
          if (m.kind === 'input') input = m.path.length === 0 ? v : setIn(input, m.path, v);
          else if (m.kind === 'data') (overrides ??= new Map()).set(m.path.join('\u0000'), v);
          else (mocks ??= new Map()).set(m.name, m.replacement ? { replacement: m.replacement } : { value: v });
        });
        const inner: EvalContext = { input, overrides, mocks, cache: new Map() };
        this.restore(inner);
        try {
          return this.expr(e, f, () => {
            const current = this.context();
            this.restore(outer);
            try {
              return k();
            } finally {
              this.restore(current);
            }
          });
        } finally {
          this.restore(outer);
        }
      },
    );
  }

  private context(): EvalContext {
    return { input: this.input, overrides: this.dataOverrides, mocks: this.mocks, cache: this.cache };
  }

  private restore(c: EvalContext): void {
    this.input = c.input;
    this.dataOverrides = c.overrides;
    this.mocks = c.mocks;
    this.cache = c.cache;
  }

  // ---- terms ----

  /** Evaluates a list of terms left to right (each may have several values). */
  terms(ts: readonly Term[], f: Frame, k: (vs: Value[]) => boolean): boolean {
    const n = ts.length;
    const out = new Array<Value>(n);
    // Fast path: every term has exactly one value or none.
    let simple = true;
    for (let i = 0; i < n; i++) {
      const v = this.simple(ts[i]!, f);
      if (v === NOT_SIMPLE) {
        simple = false;
        break;
      }
      if (v === undefined) return false;
      out[i] = v;
    }
    if (simple) return k(out);
    return this.termsFrom(ts, 0, out, f, k);
  }

  private termsFrom(ts: readonly Term[], i: number, out: Value[], f: Frame, k: (vs: Value[]) => boolean): boolean {
    if (i === ts.length) return k(out.slice());
    return this.term(ts[i]!, f, (v) => {
      out[i] = v;
      return this.termsFrom(ts, i + 1, out, f, k);
    });
  }

  /**
   * The value of a term that has at most one (no iteration, no unbound variable): the value,
   * `undefined` when it is undefined, or NOT_SIMPLE when it needs the general path.
   */
  private simple(t: Term, f: Frame): Value | undefined | typeof NOT_SIMPLE {
    switch (t.k) {
      case 'val':
        return t.v;
      case 'var': {
        const v = f[t.slot];
        return v === undefined ? NOT_SIMPLE : v;
      }
      case 'ref': {
        let v: Value | undefined;
        const root = t.root;
        if (root === 'input') v = this.input;
        else if (root === 'data') return NOT_SIMPLE;
        else {
          const r = this.simple(root, f);
          if (r === NOT_SIMPLE || r === undefined) return r;
          v = r;
        }
        const path = t.path;
        for (let i = 0; i < path.length; i++) {
          if (v === undefined) return undefined;
          const p = path[i]!;
          let key: Value | undefined;
          if (p.k === 'val') key = p.v;
          else if (p.k === 'var') {
            key = f[p.slot];
            if (key === undefined) return NOT_SIMPLE;
          } else return NOT_SIMPLE;
          v = lookup(v, key);
        }
        return v;
      }
      default:
        return NOT_SIMPLE;
    }
  }

  term(t: Term, f: Frame, k: KV): boolean {
    if (t.k === 'ref' && t.root !== 'data') {
      const v = this.simple(t, f);
      if (v !== NOT_SIMPLE) return v !== undefined && k(v);
    }
    switch (t.k) {
      case 'val':
        return k(t.v);
      case 'var': {
        const v = f[t.slot];
        if (v === undefined) throw new RegoError('eval_internal_error', `var ${t.name} is unbound`);
        return k(v);
      }
      case 'ref':
        return this.ref(t, f, k);
      case 'arr':
        return this.terms(t.items, f, (vs) => k(vs));
      case 'set':
        return this.terms(t.items, f, (vs) => k(new RegoSet(vs)));
      case 'obj': {
        const flat: Term[] = [];
        for (const [a, b] of t.entries) flat.push(a, b);
        return this.terms(flat, f, (vs) => {
          const o = new RegoObject();
          for (let i = 0; i < vs.length; i += 2) o.set(vs[i]!, vs[i + 1]!);
          return k(o);
        });
      }
      case 'call':
        return this.terms(t.args, f, (args) => this.call(t.fn, args, t.loc, k));
      case 'acomp': {
        const out: Value[] = [];
        this.body(t.body, 0, f, () => this.term(t.term, f, (v) => (out.push(v), false)));
        return k(out);
      }
      case 'scomp': {
        const out = new RegoSet();
        this.body(t.body, 0, f, () => this.term(t.term, f, (v) => (out.add(v), false)));
        return k(out);
      }
      case 'ocomp': {
        const out = new RegoObject();
        this.body(t.body, 0, f, () =>
          this.term(t.key, f, (key) =>
            this.term(t.value, f, (value) => {
              const prev = out.get(key);
              if (prev !== undefined && !equals(prev, value)) {
                throw new RegoError('eval_conflict_error', 'object keys must be unique');
              }
              out.set(key, value);
              return false;
            }),
          ),
        );
        return k(out);
      }
      case 'tmpl': {
        let s = '';
        for (const part of t.parts) {
          let text = '<undefined>';
          this.term(part, f, (v) => {
            text = typeof v === 'string' ? v : stringifyJSON(v);
            return true;
          });
          s += text;
        }
        return k(s);
      }
    }
  }

  /** The first value of a term, or undefined. */
  once(t: Term, f: Frame): Value | undefined {
    let out: Value | undefined;
    this.term(t, f, (v) => {
      out = v;
      return true;
    });
    return out;
  }

  // ---- refs ----

  private ref(t: Term & { k: 'ref' }, f: Frame, k: KV): boolean {
    const root = t.root;
    if (root === 'input') {
      if (this.input === undefined) return false;
      return this.walk(this.input, t.path, 0, f, k);
    }
    if (root === 'data') return this.walkNode(this.program.root, this.base, t.path, 0, f, k);
    return this.term(root, f, (v) => this.walk(v, t.path, 0, f, k));
  }

  /** Walks a plain value along a path; unbound variables in the path iterate. */
  private walk(v: Value, path: readonly Term[], i: number, f: Frame, k: KV, baseDoc = false): boolean {
    while (i < path.length) {
      const p = path[i]!;
      let key: Value | undefined;
      if (p.k === 'val') key = p.v;
      else if (p.k === 'var') {
        key = f[p.slot];
        if (key === undefined) {
          const slot = p.slot;
          return this.forEachMember(v, (mk, mv) => {
            f[slot] = mk;
            const r = this.walk(mv, path, i + 1, f, k);
            f[slot] = undefined;
            return r;
          });
        }
      } else {
        if (p.k === 'arr' || p.k === 'obj' || p.k === 'set') {
          if (!this.isBoundPattern(p, f)) {
            return this.forEachMember(v, (mk, mv) => this.unify(p, mk, f, () => this.walk(mv, path, i + 1, f, k)));
          }
        }
        return this.term(p, f, (kv) => {
          const child = lookup(v, kv);
          return child !== undefined && this.walk(child, path, i + 1, f, k);
        });
      }
      let child = lookup(v, key);
      // Base documents are JSON: a number key finds the object member named by its text.
      if (child === undefined && baseDoc && typeof key === 'number' && v instanceof RegoObject) child = v.get(String(key));
      if (child === undefined) return false;
      v = child;
      i++;
    }
    return k(v);
  }

  private walkNode(node: DataNode, base: Value | undefined, path: readonly Term[], i: number, f: Frame, k: KV): boolean {
    if (this.dataOverrides) {
      const o = this.dataOverrides.get(node.path.join('\u0000'));
      if (o !== undefined) return this.walk(o, path, i, f, k);
      if (node.ruleSet && this.overrideBelow(node)) {
        const full = this.nodeValue(node, base);
        return full !== undefined && this.walk(full, path, i, f, k);
      }
    }
    if (node.ruleSet) {
      // As OPA: a base document at the very path of a rule shadows the rule.
      if (base !== undefined && node.ruleSet.kind !== 'function') return this.walk(base, path, i, f, k, true);
      if (node.ruleSet.kind === 'function') {
        if (node.ruleSet.arity !== 0) return false;
        const v = this.callFunction({ k: 'func', path: node.path, name: node.ruleSet.name }, [], undefined);
        return v !== undefined && this.walk(v, path, i, f, k);
      }
      if (node.children.size === 0) {
        const v = this.ruleSetValue(node.ruleSet);
        return v !== undefined && this.walk(v, path, i, f, k);
      }
    }
    if (i === path.length) {
      const v = this.nodeValue(node, base);
      return v !== undefined && k(v);
    }
    const p = path[i]!;
    let key: Value | undefined;
    if (p.k === 'val') key = p.v;
    else if (p.k === 'var') key = f[p.slot];
    if (key === undefined) {
      if (p.k !== 'var') return this.term(p, f, (kv) => this.walkNodeKey(node, base, kv, path, i, f, k));
      const v = this.nodeValue(node, base);
      return v !== undefined && this.walk(v, path, i, f, k);
    }
    return this.walkNodeKey(node, base, key, path, i, f, k);
  }

  private walkNodeKey(node: DataNode, base: Value | undefined, key: Value, path: readonly Term[], i: number, f: Frame, k: KV): boolean {
    const child = typeof key === 'string' ? node.children.get(key) : undefined;
    let childBase = base instanceof RegoObject ? (base.get(key) ?? (typeof key === 'number' ? base.get(String(key)) : undefined)) : undefined;
    if (this.dataOverrides && !child && typeof key === 'string') childBase = this.patchBase([...node.path, key], childBase);
    if (child) return this.walkNode(child, childBase, path, i + 1, f, k);
    if (node.ruleSet) {
      const v = this.ruleSetValue(node.ruleSet);
      if (v === undefined) return false;
      const c = lookup(v, key);
      return c !== undefined && this.walk(c, path, i + 1, f, k);
    }
    if (childBase !== undefined) return this.walk(childBase, path, i + 1, f, k, true);
    if (this.dataOverrides) {
      const o = this.dataOverrides.get([...node.path, key].join('\u0000'));
      if (o !== undefined) return this.walk(o, path, i + 1, f, k);
    }
    return false;
  }

  /** Applies `with data…` overrides below `path` to a base document. */
  private patchBase(path: readonly string[], base: Value | undefined): Value | undefined {
    const prefix = path.join('\u0000');
    let out = base;
    for (const [key, v] of this.dataOverrides!) {
      if (key === prefix) return v;
      if (key.startsWith(prefix + '\u0000')) out = setIn(out, key.slice(prefix.length + 1).split('\u0000'), v);
    }
    return out;
  }

  private overrideBelow(node: DataNode): boolean {
    const prefix = node.path.length ? node.path.join('\u0000') + '\u0000' : '';
    for (const key of this.dataOverrides!.keys()) if (key.startsWith(prefix) && key !== node.path.join('\u0000')) return true;
    return false;
  }

  /** The whole document at a node: base data, child documents and the node's own rules. */
  nodeValue(node: DataNode, base: Value | undefined): Value | undefined {
    const cached = this.cache.get(node);
    if (cached !== undefined) return cached === UNDEF ? undefined : cached;
    const value = this.computeNodeValue(node, base);
    this.cache.set(node, value === undefined ? UNDEF : value);
    return value;
  }

  private computeNodeValue(node: DataNode, base: Value | undefined): Value | undefined {
    const self = this.dataOverrides?.get(node.path.join('\u0000'));
    if (self !== undefined) return self;
    let own: Value | undefined;
    if (node.ruleSet) {
      if (node.ruleSet.kind === 'function') return undefined;
      if (base !== undefined) return base;
      own = this.ruleSetValue(node.ruleSet);
      if (own !== undefined && this.dataOverrides && this.overrideBelow(node)) own = this.patchBase(node.path, own);
      if (node.children.size === 0) return own;
    }
    const out = base instanceof RegoObject ? base.copy() : new RegoObject();
    for (const [name, child] of node.children) {
      const cv = this.nodeValue(child, base instanceof RegoObject ? base.get(name) : undefined);
      if (cv !== undefined) out.set(name, cv);
    }
    if (own instanceof RegoObject) for (const [ok, ov] of own.entries()) out.set(ok, ov);
    if (this.dataOverrides) {
      const prefix = node.path.join('\u0000');
      for (const [key, v] of this.dataOverrides) {
        const parts = key.split('\u0000');
        if (parts.length === node.path.length + 1 && (node.path.length === 0 ? true : key.startsWith(prefix + '\u0000')) && !node.children.has(parts.at(-1)!)) out.set(parts.at(-1)!, v);
      }
    }
    return out;
  }

  // ---- rules ----

  ruleSetValue(rs: RuleSet): Value | undefined {
    const cached = this.cache.get(rs);
    if (cached !== undefined) return cached === UNDEF ? undefined : cached;
    if (this.inProgress.has(rs)) throw new RegoError('rego_recursion_error', `rule ${rs.name} is recursive`);
    this.inProgress.add(rs);
    let value: Value | undefined;
    this.depth++;
    try {
      value = this.computeRuleSet(rs);
    } finally {
      this.depth--;
      this.inProgress.delete(rs);
    }
    this.cache.set(rs, value === undefined ? UNDEF : value);
    return value;
  }

  private candidates(rs: RuleSet): readonly Rule[] {
    const idx = rs.index;
    if (!idx) return rs.rules;
    let v: Value | undefined;
    if (idx.root === 'input') {
      v = this.input;
      for (const p of idx.path) {
        if (v === undefined) break;
        v = lookup(v, p);
      }
    } else {
      const t: Term = { k: 'ref', root: 'data', path: idx.path.map((p) => ({ k: 'val', v: p })) };
      v = this.once(t, []);
    }
    if (v === undefined) return idx.always;
    const hit = idx.byValue.get(keyOf(v));
    if (!hit) return idx.always;
    return hit;
  }

  private computeRuleSet(rs: RuleSet): Value | undefined {
    const outer = this.currentRule;
    try {
      return this.computeRuleSetDocument(rs);
    } finally {
      this.currentRule = outer;
    }
  }

  private computeRuleSetDocument(rs: RuleSet): Value | undefined {
    switch (rs.kind) {
      case 'complete': {
        let result: Value | undefined;
        for (const rule of this.candidates(rs)) {
          this.ruleChain(rule, [], (v) => {
            if (result !== undefined && !equals(result, v)) {
              throw new RegoError('eval_conflict_error', 'complete rules must not produce multiple outputs', rule.loc);
            }
            result = v;
            return false;
          });
        }
        if (result === undefined && rs.default) result = this.once(rs.default.value, new Array(rs.default.frameSize));
        return result;
      }
      case 'set': {
        const out = new RegoSet();
        let nested: RegoObject | undefined;
        for (const rule of this.candidates(rs)) {
          const f: Frame = new Array(rule.frameSize);
          this.currentRule = rule;
          this.body(rule.body, 0, f, () => {
            if (rule.keys.length === 0) return this.term(rule.value, f, (v) => (out.add(v), false));
            return this.terms(rule.keys, f, (keys) =>
              this.term(rule.value, f, (v) => {
                nested ??= new RegoObject();
                insertNested(nested, keys, v, rule, true);
                return false;
              }),
            );
          });
        }
        if (nested) return nested;
        if (rs.rules.some((r) => r.keys.length > 0)) return new RegoObject();
        return out;
      }
      case 'object': {
        const out = new RegoObject();
        for (const rule of this.candidates(rs)) {
          const f: Frame = new Array(rule.frameSize);
          this.currentRule = rule;
          this.body(rule.body, 0, f, () =>
            this.terms(rule.keys, f, (keys) =>
              this.term(rule.value, f, (v) => {
                insertNested(out, keys, v, rule, false);
                return false;
              }),
            ),
          );
        }
        if (out.size === 0 && rs.default) {
          const d = this.once(rs.default.value, new Array(rs.default.frameSize));
          return d;
        }
        return out;
      }
      case 'function':
        return undefined;
    }
  }

  /** Values of a rule with its else chain: the first rule in the chain with a solution decides. */
  private ruleChain(rule: Rule, args: readonly Value[], k: KV): void {
    let r: Rule | undefined = rule;
    while (r) {
      const f: Frame = new Array(r.frameSize);
      let found = false;
      const cur: Rule = r;
      const outer = this.currentRule;
      this.currentRule = cur;
      this.unifyArgs(cur.args, args, 0, f, () =>
        this.body(cur.body, 0, f, () =>
          this.term(cur.value, f, (v) => {
            found = true;
            return k(v);
          }),
        ),
      );
      this.currentRule = outer;
      if (found) return;
      r = r.else;
    }
  }

  private unifyArgs(patterns: readonly Term[], args: readonly Value[], i: number, f: Frame, k: K): boolean {
    if (i === patterns.length) return k();
    return this.unify(patterns[i]!, args[i]!, f, () => this.unifyArgs(patterns, args, i + 1, f, k));
  }

  // ---- calls ----

  call(fn: Callee, args: Value[], loc: Location | undefined, k: KV): boolean {
    if (this.mocks) {
      const mock = this.mocks.get(fn.name);
      if (mock) {
        if (mock.value !== undefined) return k(mock.value);
        if (mock.replacement) {
          // The replacement runs with the mock lifted, so it may call the function it replaces.
          const mocks = this.mocks;
          const lifted = new Map(mocks);
          lifted.delete(fn.name);
          this.mocks = lifted.size ? lifted : undefined;
          const saved = this.cache;
          this.cache = new Map();
          let results: Value[] = [];
          try {
            this.call(mock.replacement, args, loc, (v) => (results.push(v), false));
          } finally {
            this.mocks = mocks;
            this.cache = saved;
          }
          for (const v of results) if (k(v)) return true;
          return false;
        }
      }
    }
    if (fn.k === 'func') {
      const v = this.callFunction(fn, args, loc);
      return v !== undefined && k(v);
    }
    return this.callBuiltin(fn.name, args, loc, k);
  }

  private callFunction(fn: Callee & { k: 'func' }, args: Value[], loc: Location | undefined): Value | undefined {
    const rs = this.program.ruleSets.get(fn.name);
    if (!rs || rs.kind !== 'function') {
      // A call to a rule that is not a function: OPA treats data refs used as functions as undefined.
      return undefined;
    }
    const key = rs.arity > 0 ? argsKey(args) : '';
    let memo = this.cache.get(rs) as unknown as Map<string, Value | typeof UNDEF> | undefined;
    if (memo === undefined) {
      memo = new Map();
      this.cache.set(rs, memo as never);
    }
    const hit = memo.get(key);
    if (hit !== undefined) return hit === UNDEF ? undefined : hit;
    let result: Value | undefined;
    this.depth++;
    try {
      for (const rule of rs.rules) {
        this.ruleChain(rule, args, (v) => {
          if (result !== undefined && !equals(result, v)) {
            throw new RegoError('eval_conflict_error', 'functions must not produce multiple outputs for same inputs', loc ?? rule.loc);
          }
          result = v;
          return false;
        });
      }
    } finally {
      this.depth--;
    }
    if (result === undefined && rs.default) result = this.once(rs.default.value, new Array(rs.default.frameSize));
    memo.set(key, result === undefined ? UNDEF : result);
    return result;
  }

  private callBuiltin(name: string, args: Value[], loc: Location | undefined, k: KV): boolean {
    switch (name) {
      case 'internal.member_2':
        return k(isMember(args[0]!, args[1]!));
      case 'internal.member_3':
        return k(isMemberKV(args[0]!, args[1]!, args[2]!));
      case 'print':
      case 'internal.print':
        return k(true);
      case 'equal':
        return k(equals(args[0]!, args[1]!));
      case 'neq':
        return k(!equals(args[0]!, args[1]!));
    }
    const b = builtins.get(name);
    if (!b) throw new RegoError('eval_internal_error', `unsupported builtin ${name}`, loc);
    if (loc) this.lastLoc = loc;
    try {
      if (b.relation) {
        for (const v of invokeRelation(b, args, this.ctx)) if (k(v)) return true;
        return false;
      }
      const v = invoke(b, args, this.ctx);
      return v !== undefined && k(v);
    } catch (e) {
      if (e instanceof BuiltinError) {
        // As OPA: with strict builtin errors off, a failing call (bad operand types included) is
        // undefined; only builtins this build cannot run fail loudly either way.
        if (this.settings.strictBuiltinErrors || e instanceof UnsupportedBuiltinError) throw new RegoError(e.code, e.message, loc);
        return false;
      }
      throw e;
    }
  }

  /** `print(...)`: arguments that are undefined print as `<undefined>`. */
  printCall(args: Term[], f: Frame): void {
    const parts = args.map((a) => {
      const v = this.once(a, f);
      return v === undefined ? '<undefined>' : typeof v === 'string' ? v : stringifyJSON(v);
    });
    this.ctx.print(parts.join(' '));
  }

  // ---- unification ----

  unifyTerms(a: Term, b: Term, f: Frame, k: K): boolean {
    if (a.k === 'var' && f[a.slot] === undefined) {
      const v = this.simple(b, f);
      if (v !== NOT_SIMPLE) return v !== undefined && this.bind(a.slot, v, f, k);
      return this.term(b, f, (w) => this.bind(a.slot, w, f, k));
    }
    if (b.k === 'var' && f[b.slot] === undefined) return this.term(a, f, (v) => this.bind(b.slot, v, f, k));
    if (a.k === 'arr' && b.k === 'arr') {
      if (a.items.length !== b.items.length) return false;
      return this.unifyItems(a.items, b.items, 0, f, k);
    }
    if (this.isBoundPattern(a, f)) return this.term(a, f, (v) => this.unify(b, v, f, k));
    return this.term(b, f, (v) => this.unify(a, v, f, k));
  }

  private unifyItems(a: readonly Term[], b: readonly Term[], i: number, f: Frame, k: K): boolean {
    if (i === a.length) return k();
    return this.unifyTerms(a[i]!, b[i]!, f, () => this.unifyItems(a, b, i + 1, f, k));
  }

  private unifyArray(items: readonly Term[], arr: readonly Value[], i: number, f: Frame, k: K): boolean {
    if (i === arr.length) return k();
    return this.unify(items[i]!, arr[i]!, f, () => this.unifyArray(items, arr, i + 1, f, k));
  }

  private unifyObject(entries: ReadonlyArray<[Term, Term]>, obj: RegoObject, i: number, f: Frame, k: K): boolean {
    if (i === entries.length) return k();
    const [kt, vt] = entries[i]!;
    return this.term(kt, f, (key) => {
      const child = obj.get(key);
      return child !== undefined && this.unify(vt, child, f, () => this.unifyObject(entries, obj, i + 1, f, k));
    });
  }

  private bind(slot: number, v: Value, f: Frame, k: K): boolean {
    f[slot] = v;
    const r = k();
    f[slot] = undefined;
    return r;
  }

  /** Whether a term has no unbound variable in a pattern position. */
  private isBoundPattern(t: Term, f: Frame): boolean {
    switch (t.k) {
      case 'var':
        return f[t.slot] !== undefined;
      case 'arr':
      case 'set':
        return t.items.every((x) => this.isBoundPattern(x, f));
      case 'obj':
        return t.entries.every(([, v]) => this.isBoundPattern(v, f));
      default:
        return true;
    }
  }

  /** Unifies a term (possibly with unbound variables) with a value. */
  unify(t: Term, v: Value, f: Frame, k: K): boolean {
    switch (t.k) {
      case 'val':
        return equals(t.v, v) && k();
      case 'var': {
        const cur = f[t.slot];
        if (cur !== undefined) return equals(cur, v) && k();
        f[t.slot] = v;
        const r = k();
        f[t.slot] = undefined;
        return r;
      }
      case 'arr': {
        if (!Array.isArray(v) || v.length !== t.items.length) return false;
        return this.unifyArray(t.items, v as readonly Value[], 0, f, k);
      }
      case 'obj': {
        if (!(v instanceof RegoObject) || v.size !== t.entries.length) return false;
        return this.unifyObject(t.entries, v, 0, f, k);
      }
      default:
        return this.term(t, f, (tv) => equals(tv, v) && k());
    }
  }
}

function lookup(v: Value, key: Value): Value | undefined {
  if (Array.isArray(v)) {
    if (typeof key !== 'number' || !Number.isInteger(key)) {
      if (typeof key === 'object' && key !== null && !Array.isArray(key) && !(key instanceof RegoObject) && !(key instanceof RegoSet)) {
        if (!isInteger(key as RegoNumber)) return undefined;
        const i = toSafeInteger(key as RegoNumber);
        return i === undefined ? undefined : v[i];
      }
      return undefined;
    }
    return v[key];
  }
  if (v instanceof RegoObject) return v.get(key);
  if (v instanceof RegoSet) return v.has(key) ? key : undefined;
  return undefined;
}

function isMember(x: Value, coll: Value): boolean {
  if (Array.isArray(coll)) return coll.some((m: Value) => equals(m, x));
  if (coll instanceof RegoSet) return coll.has(x);
  if (coll instanceof RegoObject) return coll.values().some((m) => equals(m, x));
  return false;
}

function isMemberKV(key: Value, value: Value, coll: Value): boolean {
  const v = lookup(coll, key);
  if (coll instanceof RegoSet) return false;
  return v !== undefined && equals(v, value);
}

function argsKey(args: readonly Value[]): string {
  let s = '';
  for (const a of args) s += keyOf(a) + '\u0001';
  return s;
}

/** Sets `value` at `path` inside `doc` (creating objects), returning a new document. */
function setIn(doc: Value | undefined, path: readonly string[], value: Value): Value {
  if (path.length === 0) return value;
  const obj = doc instanceof RegoObject ? doc.copy() : new RegoObject();
  const [head, ...rest] = path;
  obj.set(head!, setIn(obj.get(head!), rest, value));
  return obj;
}

/** Inserts an object rule's value at its key path, reporting conflicting values. */
function insertNested(obj: RegoObject, keys: readonly Value[], v: Value, rule: Rule, asSet: boolean): void {
  let cur = obj;
  for (let i = 0; i < keys.length - 1; i++) {
    const key = keys[i]!;
    let next = cur.get(key);
    if (next === undefined) {
      next = new RegoObject();
      cur.set(key, next);
    } else if (!(next instanceof RegoObject)) {
      throw new RegoError('eval_conflict_error', 'object keys must be unique', rule.loc);
    }
    cur = next;
  }
  const last = keys[keys.length - 1]!;
  if (asSet) {
    let set = cur.get(last);
    if (set === undefined) {
      set = new RegoSet();
      cur.set(last, set);
    }
    if (!(set instanceof RegoSet)) throw new RegoError('eval_conflict_error', 'object keys must be unique', rule.loc);
    set.add(v);
    return;
  }
  const prev = cur.get(last);
  if (prev !== undefined && !equals(prev, v)) throw new RegoError('eval_conflict_error', 'object keys must be unique', rule.loc);
  cur.set(last, v);
}

