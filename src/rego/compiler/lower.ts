import { RegoError } from '../errors.js';
import type * as A from '../syntax/ast.js';
import { refName } from '../syntax/ast.js';
import { fromJSON, parseNumber, RegoObject, RegoSet, type Value } from '../value/index.js';
import type { Body, Callee, Expr, Literal, Term, With } from './ir.js';

/** What name resolution needs to know about the world outside one body. */
export interface Resolver {
  /** Absolute path (without `data`) of the module's package. */
  packagePath: string[];
  /** Names of rules in that package (first head-ref element), visible unqualified. */
  ruleNames: ReadonlySet<string>;
  /** Import aliases → the ref they stand for (`input.x`, `data.a.b`). */
  imports: ReadonlyMap<string, A.Term>;
  /** Arity of the user function at a data path, if one is defined there. */
  functionArity(path: readonly string[]): number | undefined;
  /** Declared arity of a builtin, if it exists. */
  builtinArity(name: string): number | undefined;
  /** Whether the builtin produces a value (print does not). */
  builtinHasResult(name: string): boolean;
  file: string;
  /** Whether a builtin is deprecated (rejected in v1). */
  builtinDeprecated?(name: string): boolean;
  /** Rego v1 rules apply (no shadowing of input/data). */
  regoV1?: boolean;
  /** OPA's strict mode. */
  strict?: boolean;
}

/** Allocates slots of one frame. */
export class Frame {
  size = 0;
  alloc(): number {
    return this.size++;
  }
}

/** Variables visible in one body: its own, then the enclosing bodies' (comprehension closures). */
export class Scope {
  readonly vars = new Map<string, number>();
  /** Names declared with `:=`/`some`, by the index of the declaring expression. */
  readonly declaredAt = new Map<string, number>();
  /** Index of the expression being lowered: nested bodies see only names declared before it. */
  current = 0;
  constructor(
    readonly frame: Frame,
    readonly parent?: Scope,
  ) {}

  lookup(name: string): number | undefined {
    return this.vars.get(name) ?? this.parent?.visible(name);
  }

  /** A name as seen from a nested body. */
  private visible(name: string): number | undefined {
    const at = this.declaredAt.get(name);
    if (at !== undefined && at >= this.current) return this.parent?.visible(name);
    return this.lookup(name);
  }

  declare(name: string): number {
    let slot = this.vars.get(name);
    if (slot === undefined) {
      slot = this.frame.alloc();
      this.vars.set(name, slot);
    }
    return slot;
  }
}

export class Lowerer {
  readonly errors: RegoError[] = [];

  constructor(private readonly r: Resolver) {}

  private error(code: string, message: string, loc?: A.Location): void {
    this.errors.push(new RegoError(code, message, loc ?? { file: this.r.file, row: 1, col: 1 }));
  }

  /** Whether a bare name resolves to something global rather than a local variable. */
  isGlobal(name: string): boolean {
    return name === 'input' || name === 'data' || this.r.ruleNames.has(name) || this.r.imports.has(name);
  }

  /** Opens a scope for `body`, declaring the names first used at this level. */
  openScope(body: A.Body, frame: Frame, parent: Scope | undefined, declared: Iterable<string> = [], args: Iterable<string> = []): Scope {
    this.checkDeclarations(body, new Set(args));
    const scope = new Scope(frame, parent);
    for (const name of declared) scope.declare(name);
    const { used, decl } = namesAtLevel(body);
    for (const [name, at] of decl) {
      scope.declare(name);
      scope.declaredAt.set(name, at);
    }
    for (const name of used) {
      if (name === '_' || scope.lookup(name) !== undefined || this.isGlobal(name)) continue;
      if (this.r.builtinArity(name) !== undefined && !decl.has(name)) continue;
      scope.declare(name);
    }
    return scope;
  }

  /**
   * OPA's rules for declarations in one body: `:=` declares (never twice, never a function
   * argument), `some` declares a name not used before it, and in v1 nothing shadows input/data.
   */
  private checkDeclarations(body: A.Body, declared: Set<string>): void {
    const used = new Set<string>();
    const declare = (name: string, how: 'assigned' | 'declared', loc?: A.Location): void => {
      if (name === '_') return;
      if (declared.has(name)) this.error('rego_compile_error', `var ${name} ${how} above`, loc);
      else if (how === 'declared' && used.has(name)) this.error('rego_compile_error', `var ${name} referenced above`, loc);
      else if ((name === 'input' || name === 'data') && (this.r.regoV1 || this.r.strict)) {
        this.error('rego_compile_error', `variables must not shadow ${name} (use a different variable name)`, loc);
      }
      declared.add(name);
    };
    for (const e of body) {
      const terms = e.terms;
      if (Array.isArray(terms) && refName(terms[0]!) === 'assign') {
        const lhs = terms[1]!;
        if (lhs.type !== 'var' && lhs.type !== 'array' && lhs.type !== 'object') {
          this.error('rego_compile_error', `cannot assign to ${lhs.type}`, e.location);
        }
        for (const n of patternVars(lhs)) declare(n, 'assigned', e.location);
        namesAtLevel([{ ...e, terms: [terms[0]!, { type: 'null', value: null }, terms[2]!] }]).used.forEach((n) => used.add(n));
        continue;
      }
      if (!Array.isArray(terms) && terms.type === 'somedecl') {
        for (const sym of terms.symbols) {
          if (sym.type === 'var') declare(sym.value, 'declared', e.location);
          else if (sym.type === 'call') {
            const args = sym.value.slice(1);
            for (const a of args.slice(0, -1)) for (const n of patternVars(a)) declare(n, 'declared', e.location);
            namesAtLevel([{ ...e, terms: args[args.length - 1]! }]).used.forEach((n) => used.add(n));
          }
        }
        continue;
      }
      namesAtLevel([e]).used.forEach((n) => used.add(n));
    }
  }

  body(body: A.Body, scope: Scope): Body {
    const out: Body = [];
    const last = scope.current;
    for (const expr of body) {
      scope.current = expr.index;
      const e = this.expr(expr, scope);
      if (e) out.push(e);
    }
    scope.current = Math.max(last, Number.MAX_SAFE_INTEGER);
    return out;
  }

  expr(e: A.Expr, scope: Scope): Expr | undefined {
    const loc = e.location ?? { file: this.r.file, row: 1, col: 1 };
    const lit = this.literal(e.terms, scope, loc);
    if (!lit) return undefined;
    const out: Expr = { lit, negated: !!e.negated, loc, text: '', index: e.index };
    if (e.with?.length) out.with = e.with.map((w) => this.with(w, scope));
    return out;
  }

  private literal(terms: A.Expr['terms'], scope: Scope, loc: A.Location): Literal | undefined {
    if (Array.isArray(terms)) return this.callLiteral(terms, scope, loc);
    if (terms.type === 'somedecl') {
      const s = terms.symbols[0];
      if (s && s.type === 'call') {
        const args = s.value.slice(1);
        if (args.length === 3) return { k: 'somein', key: this.term(args[0]!, scope), value: this.term(args[1]!, scope), domain: this.term(args[2]!, scope) };
        return { k: 'somein', value: this.term(args[0]!, scope), domain: this.term(args[1]!, scope) };
      }
      return undefined;
    }
    if (terms.type === 'every') {
      const from = scope.frame.size;
      const inner = this.openScope(terms.body, scope.frame, scope, [
        ...(terms.key ? patternVars(terms.key) : []),
        ...patternVars(terms.value),
      ]);
      return {
        k: 'every',
        ...(terms.key ? { key: this.term(terms.key, inner) } : {}),
        value: this.term(terms.value, inner),
        domain: this.term(terms.domain, scope),
        body: this.body(terms.body, inner),
        own: { from, to: scope.frame.size },
      };
    }
    if (terms.type === 'call') return this.callLiteral(terms.value, scope, loc);
    return { k: 'term', t: this.term(terms, scope) };
  }

  private callLiteral(terms: A.Term[], scope: Scope, loc: A.Location): Literal {
    const op = refName(terms[0]!);
    const args = terms.slice(1);
    if (op === 'eq' || op === 'assign') {
      return { k: 'unify', a: this.term(args[0]!, scope), b: this.term(args[1]!, scope), assign: op === 'assign' };
    }
    const fn = this.callee(terms[0]!, loc);
    const arity = this.arity(fn);
    const lowered = args.map((a) => this.term(a, scope));
    if (arity !== undefined && lowered.length === arity + 1) {
      return { k: 'call', fn, args: lowered.slice(0, arity), out: lowered[arity]! };
    }
    if (arity !== undefined && lowered.length !== arity && !(fn.k === 'builtin' && (fn.name === 'print' || fn.name === 'internal.print'))) {
      this.error('rego_type_error', `${fn.name}: arity mismatch\n\thave: ${lowered.length} args\n\twant: ${arity} args`, loc);
    }
    return { k: 'call', fn, args: lowered };
  }

  private arity(fn: Callee): number | undefined {
    return fn.k === 'func' ? this.r.functionArity(fn.path) : this.r.builtinArity(fn.name);
  }

  /** Resolves a call's operator to a user function or a builtin. */
  callee(op: A.Term, loc?: A.Location): Callee {
    const name = refName(op);
    if (name === undefined) {
      this.error('rego_type_error', 'invalid function reference', loc);
      return { k: 'builtin', name: '?' };
    }
    const path = this.globalPath(op);
    if (path && path.root === 'data') {
      if (this.r.functionArity(path.path) !== undefined) return { k: 'func', path: path.path, name: ['data', ...path.path].join('.') };
    }
    if (this.r.builtinArity(name) !== undefined) {
      if ((this.r.regoV1 || this.r.strict) && this.r.builtinDeprecated?.(name)) this.error('rego_type_error', `undefined function ${name}`, loc ?? op.location);
      return { k: 'builtin', name };
    }
    this.error('rego_type_error', `undefined function ${name}`, loc ?? op.location);
    return { k: 'builtin', name };
  }

  /** The absolute path a ref of plain names denotes, when its head is global. */
  globalPath(t: A.Term): { root: 'data' | 'input'; path: string[] } | undefined {
    const parts = t.type === 'ref' ? t.value : t.type === 'var' ? [t] : undefined;
    if (!parts) return undefined;
    const head = parts[0]!;
    if (head.type !== 'var') return undefined;
    const rest: string[] = [];
    for (const p of parts.slice(1)) {
      if (p.type !== 'string') return undefined;
      rest.push(p.value);
    }
    const base = this.expandGlobal(head.value);
    if (!base) return undefined;
    return { root: base.root, path: [...base.path, ...rest] };
  }

  private expandGlobal(name: string): { root: 'data' | 'input'; path: string[] } | undefined {
    if (name === 'input' || name === 'data') return { root: name, path: [] };
    const imp = this.r.imports.get(name);
    if (imp) {
      const g = this.globalPath(imp);
      return g;
    }
    if (this.r.ruleNames.has(name)) return { root: 'data', path: [...this.r.packagePath, name] };
    return undefined;
  }

  private with(w: A.With, scope: Scope): With {
    const value: Term = { k: 'val', v: null };
    const target = w.target;
    const g = this.globalPath(target);
    const name = refName(target) ?? '';
    const out: With = { kind: 'input', path: [], name, value };
    if (g && g.root === 'input') {
      out.kind = 'input';
      out.path = g.path;
    } else if (g && g.root === 'data' && this.r.functionArity(g.path) === undefined) {
      out.kind = 'data';
      out.path = g.path;
    } else if (g && g.root === 'data') {
      out.kind = 'func';
      out.path = g.path;
      out.name = ['data', ...g.path].join('.');
    } else if (this.r.builtinArity(name) !== undefined) {
      out.kind = 'func';
      out.name = name;
    } else {
      this.error('rego_compile_error', `with keyword target must reference existing input, data, or a function`, w.location);
    }
    if (out.kind === 'func') {
      const vn = refName(w.value);
      if (vn !== undefined && (w.value.type === 'ref' || w.value.type === 'var')) {
        const vg = this.globalPath(w.value);
        const isLocal = w.value.type === 'var' && scope.lookup(w.value.value) !== undefined;
        if (!isLocal && ((vg && vg.root === 'data' && this.r.functionArity(vg.path) !== undefined) || (!vg && this.r.builtinArity(vn) !== undefined))) {
          out.replacement = this.callee(w.value, w.location);
        }
      }
    }
    if (!out.replacement) out.value = this.term(w.value, scope);
    return out;
  }

  term(t: A.Term, scope: Scope): Term {
    switch (t.type) {
      case 'null':
        return { k: 'val', v: null };
      case 'boolean':
        return { k: 'val', v: t.value };
      case 'number': {
        const n = parseNumber(t.value);
        if (n === undefined) {
          this.error('rego_parse_error', `invalid number ${t.value}`, t.location);
          return { k: 'val', v: 0 };
        }
        return { k: 'val', v: n };
      }
      case 'string':
        return { k: 'val', v: t.value };
      case 'var': {
        if (t.value === '_') return { k: 'var', slot: scope.frame.alloc(), name: '_' };
        const slot = scope.lookup(t.value);
        if (slot !== undefined) return { k: 'var', slot, name: t.value };
        const g = this.expandGlobal(t.value);
        if (g) return { k: 'ref', root: g.root, path: g.path.map((p) => ({ k: 'val', v: p })), ...(t.location ? { loc: t.location } : {}) };
        return { k: 'var', slot: scope.declare(t.value), name: t.value };
      }
      case 'ref': {
        const head = t.value[0]!;
        const rest = t.value.slice(1).map((p) => this.term(p, scope));
        const loc = t.location ? { loc: t.location } : {};
        if (head.type === 'var' && head.value !== '_' && scope.lookup(head.value) === undefined) {
          const g = this.expandGlobal(head.value);
          if (g) return { k: 'ref', root: g.root, path: [...g.path.map((p): Term => ({ k: 'val', v: p })), ...rest], ...loc };
        }
        return { k: 'ref', root: this.term(head, scope), path: rest, ...loc };
      }
      case 'array': {
        const items = t.value.map((x) => this.term(x, scope));
        return allVal(items) ? { k: 'val', v: items.map((i) => (i as { v: Value }).v) } : { k: 'arr', items };
      }
      case 'set': {
        const items = t.value.map((x) => this.term(x, scope));
        return allVal(items) ? { k: 'val', v: new RegoSet(items.map((i) => (i as { v: Value }).v)) } : { k: 'set', items };
      }
      case 'object': {
        const entries = t.value.map(([k, v]): [Term, Term] => [this.term(k, scope), this.term(v, scope)]);
        if (entries.every(([k, v]) => k.k === 'val' && v.k === 'val')) {
          const o = new RegoObject();
          for (const [k, v] of entries) o.set((k as { v: Value }).v, (v as { v: Value }).v);
          return { k: 'val', v: o };
        }
        return { k: 'obj', entries };
      }
      case 'call': {
        const fn = this.callee(t.value[0]!, t.location);
        const args = t.value.slice(1).map((a) => this.term(a, scope));
        const arity = this.arity(fn);
        if (arity !== undefined && args.length !== arity && !(fn.k === 'builtin' && fn.name.endsWith('print'))) {
          this.error('rego_type_error', `${fn.name}: arity mismatch\n\thave: ${args.length} args\n\twant: ${arity} args`, t.location);
        }
        return { k: 'call', fn, args, ...(t.location ? { loc: t.location } : {}) };
      }
      case 'arraycomprehension':
      case 'setcomprehension': {
        const from = scope.frame.size;
        const inner = this.openScope(t.value.body, scope.frame, scope);
        const term = this.term(t.value.term, inner);
        const body = this.body(t.value.body, inner);
        return { k: t.type === 'arraycomprehension' ? 'acomp' : 'scomp', term, body, own: { from, to: scope.frame.size } };
      }
      case 'objectcomprehension': {
        const from = scope.frame.size;
        const inner = this.openScope(t.value.body, scope.frame, scope);
        const key = this.term(t.value.key, inner);
        const value = this.term(t.value.value, inner);
        const body = this.body(t.value.body, inner);
        return { k: 'ocomp', key, value, body, own: { from, to: scope.frame.size } };
      }
      case 'templatestring':
        return { k: 'tmpl', parts: t.value.map((p) => this.term(p, scope)) };
    }
  }
}

function allVal(items: Term[]): boolean {
  return items.every((i) => i.k === 'val');
}

/** Vars in the pattern positions of a term (top level, array/object/set members). */
export function patternVars(t: A.Term): string[] {
  switch (t.type) {
    case 'var':
      return t.value === '_' ? [] : [t.value];
    case 'array':
    case 'set':
      return t.value.flatMap(patternVars);
    case 'object':
      return t.value.flatMap(([, v]) => patternVars(v));
    default:
      return [];
  }
}

/**
 * Names used in a body at its own level (not inside nested comprehension/every bodies) and the
 * names it declares with `some`, `:=` or `some … in`.
 */
export function namesAtLevel(body: A.Body): { used: Set<string>; decl: Map<string, number> } {
  const used = new Set<string>();
  const declMap = new Map<string, number>();
  let index = 0;
  const decl = { add: (n: string) => void (declMap.has(n) || declMap.set(n, index)) };
  const visitTerm = (t: A.Term): void => {
    switch (t.type) {
      case 'var':
        used.add(t.value);
        return;
      case 'ref':
      case 'array':
      case 'set':
      case 'call':
        t.value.forEach(visitTerm);
        return;
      case 'object':
        t.value.forEach(([k, v]) => {
          visitTerm(k);
          visitTerm(v);
        });
        return;
      case 'templatestring':
        t.value.forEach(visitTerm);
        return;
      default:
        return;
    }
  };
  for (const e of body) {
    index = e.index;
    const terms = e.terms;
    if (Array.isArray(terms)) {
      const op = refName(terms[0]!);
      if (op === 'assign') for (const n of patternVars(terms[1]!)) decl.add(n);
      terms.slice(1).forEach(visitTerm);
    } else if (terms.type === 'somedecl') {
      for (const s of terms.symbols) {
        if (s.type === 'var') decl.add(s.value);
        else if (s.type === 'call') {
          const args = s.value.slice(1);
          for (const a of args.slice(0, -1)) for (const n of patternVars(a)) decl.add(n);
          args.forEach(visitTerm);
        }
      }
    } else if (terms.type === 'every') {
      visitTerm(terms.domain);
    } else visitTerm(terms);
    for (const w of e.with ?? []) visitTerm(w.value);
  }
  return { used, decl: declMap };
}

/** Converts a JSON value to a constant term. */
export function constant(v: unknown): Term {
  return { k: 'val', v: fromJSON(v) };
}
