import { RegoError } from '../errors.js';
import { RegoObject, RegoSet, type Value } from '../value/index.js';
import type { Body, Expr, Literal, Term } from './ir.js';

/**
 * Safety: orders each body so that every variable is bound before it is read, as OPA's
 * `reorderBodyForSafety` does, and reports `rego_unsafe_var_error` for variables that nothing can
 * bind. Nested bodies (comprehensions, `every`) are ordered when their enclosing expression is
 * placed, with the variables bound at that point. Unifications of two composite literals are split
 * into element-wise unifications so that each side can bind the other's variables.
 */
export function reorderBody(body: Body, bound: Set<number>, errors: RegoError[], headUses: ReadonlySet<number> = new Set()): Body {
  for (const e of body) {
    const lit = e.lit;
    if (lit.k === 'unify' && shapeMismatch(lit.a, lit.b)) errors.push(new RegoError('rego_type_error', 'match error: the two sides of the unification can never match', e.loc));
    if (lit.k === 'somein' && lit.domain.k === 'val' && (Array.isArray(lit.domain.v) || lit.domain.v instanceof RegoSet)) {
      const members: readonly Value[] = Array.isArray(lit.domain.v) ? (lit.domain.v as readonly Value[]) : (lit.domain.v as RegoSet).values();
      if (members.length > 0 && members.every((m) => shapeMismatch(lit.value, { k: 'val', v: m }))) {
        errors.push(new RegoError('rego_type_error', 'match error: no member of the collection can match the pattern', e.loc));
      }
    }
  }
  const remaining = splitUnifications(body);
  const out: Body = [];
  const negLocal = negationLocals(remaining, headUses);
  while (remaining.length > 0) {
    let placed = -1;
    for (let i = 0; i < remaining.length; i++) {
      const a = analyze(remaining[i]!, bound, negLocal);
      if (a.needs.size === 0) {
        placed = i;
        const e = remaining[i]!;
        reorderNested(e, bound, errors);
        for (const s of a.outs) bound.add(s);
        out.push(e);
        break;
      }
    }
    if (placed < 0) {
      const e = remaining[0]!;
      const a = analyze(e, bound, negLocal);
      const names = [...new Set([...a.needNames.values()])].sort();
      for (const name of names) errors.push(new RegoError('rego_unsafe_var_error', `var ${name} is unsafe`, e.loc));
      if (names.length === 0) errors.push(new RegoError('rego_unsafe_var_error', `expression is unsafe`, e.loc));
      return out.concat(remaining);
    }
    remaining.splice(placed, 1);
  }
  return out;
}

/** Slots the term needs bound (value position) and would bind (pattern position / ref iteration). */
export function termVars(t: Term, bound: ReadonlySet<number>, pattern: boolean, acc: Acc): void {
  switch (t.k) {
    case 'val':
      return;
    case 'var':
      if (bound.has(t.slot) || acc.outs.has(t.slot)) return;
      if (pattern || t.name === '_' && false) acc.outs.add(t.slot);
      else need(acc, t.slot, t.name);
      return;
    case 'ref':
      if (typeof t.root !== 'string') termVars(t.root, bound, false, acc);
      for (const p of t.path) {
        if (p.k === 'var' || p.k === 'arr' || p.k === 'obj') termVars(p, withOuts(bound, acc), true, acc);
        else termVars(p, withOuts(bound, acc), false, acc);
      }
      return;
    case 'arr':
    case 'set':
      for (const i of t.items) termVars(i, bound, pattern, acc);
      return;
    case 'obj':
      for (const [k, v] of t.entries) {
        termVars(k, bound, false, acc);
        termVars(v, bound, pattern, acc);
      }
      return;
    case 'call':
      for (const a of t.args) termVars(a, bound, false, acc);
      return;
    case 'tmpl':
      for (const p of t.parts) termVars(p, bound, false, acc);
      return;
    case 'acomp':
    case 'scomp':
    case 'ocomp':
      for (const [slot, name] of freeVars(t)) if (!bound.has(slot) && !acc.outs.has(slot)) need(acc, slot, name);
      return;
  }
}

export interface Acc {
  needs: Set<number>;
  needNames: Map<number, string>;
  outs: Set<number>;
}

function need(acc: Acc, slot: number, name: string): void {
  acc.needs.add(slot);
  acc.needNames.set(slot, name);
}

function newAcc(): Acc {
  return { needs: new Set(), needNames: new Map(), outs: new Set() };
}

function withOuts(bound: ReadonlySet<number>, acc: Acc): ReadonlySet<number> {
  if (acc.outs.size === 0) return bound;
  const s = new Set(bound);
  for (const o of acc.outs) s.add(o);
  return s;
}

function analyze(e: Expr, bound: ReadonlySet<number>, negLocal: Map<Expr, Set<number>>): Acc {
  const acc = newAcc();
  literalVars(e.lit, bound, acc);
  for (const w of e.with ?? []) termVars(w.value, bound, false, acc);
  if (e.negated) {
    // Variables used only by this negated expression are local to it; the others must be bound.
    const local = negLocal.get(e)!;
    const all = newAcc();
    literalVars(e.lit, new Set(), all);
    for (const s of [...all.outs, ...all.needs]) {
      if (!bound.has(s) && !local.has(s)) need(acc, s, all.needNames.get(s) ?? nameOf(e, s));
    }
    for (const s of [...acc.needs]) if (local.has(s)) acc.needs.delete(s);
    acc.outs.clear();
  }
  return acc;
}

function nameOf(e: Expr, slot: number): string {
  let found = '?';
  visitLiteralTerms(e.lit, (t) => {
    if (t.k === 'var' && t.slot === slot) found = t.name;
  });
  return found;
}

function literalVars(lit: Literal, bound: ReadonlySet<number>, acc: Acc): void {
  switch (lit.k) {
    case 'term':
      termVars(lit.t, bound, false, acc);
      return;
    case 'unify': {
      const a = newAcc();
      termVars(lit.a, bound, false, a);
      if (a.needs.size === 0) {
        for (const o of a.outs) acc.outs.add(o);
        termVars(lit.b, withOuts(bound, acc), true, acc);
        return;
      }
      const b = newAcc();
      termVars(lit.b, bound, false, b);
      if (b.needs.size === 0) {
        for (const o of b.outs) acc.outs.add(o);
        termVars(lit.a, withOuts(bound, acc), true, acc);
        return;
      }
      // Neither side can be evaluated yet: report the needs of the side with fewer of them.
      const pick = a.needs.size <= b.needs.size ? a : b;
      for (const s of pick.needs) need(acc, s, pick.needNames.get(s)!);
      return;
    }
    case 'call':
      for (const a of lit.args) termVars(a, bound, false, acc);
      if (lit.out) termVars(lit.out, withOuts(bound, acc), true, acc);
      return;
    case 'somein':
      termVars(lit.domain, bound, false, acc);
      if (lit.key) termVars(lit.key, withOuts(bound, acc), true, acc);
      termVars(lit.value, withOuts(bound, acc), true, acc);
      return;
    case 'every': {
      termVars(lit.domain, bound, false, acc);
      for (const [slot, name] of freeVarsOfBody(lit.body, lit.own)) if (!bound.has(slot)) need(acc, slot, name);
      return;
    }
  }
}

/** Orders the comprehension bodies inside a rule head term once the body has bound its variables. */
export function reorderTermBodies(t: Term, bound: Set<number>, errors: RegoError[], loc: Expr['loc']): void {
  reorderNested({ lit: { k: 'term', t }, negated: false, loc, text: '', index: 0 }, bound, errors);
}

/** Orders the bodies nested in an expression now that it is placed. */
function reorderNested(e: Expr, bound: Set<number>, errors: RegoError[]): void {
  const visit = (t: Term, extra: ReadonlySet<number>): void => {
    if (t.k === 'acomp' || t.k === 'scomp' || t.k === 'ocomp') {
      const inner = new Set([...bound, ...extra]);
      const uses = new Set<number>();
      if (t.k === 'ocomp') {
        collectSlots(t.key, uses);
        collectSlots(t.value, uses);
      } else collectSlots(t.term, uses);
      t.body = reorderBody(t.body, inner, errors, uses);
      const headAcc = newAcc();
      if (t.k === 'ocomp') {
        termVars(t.key, inner, false, headAcc);
        termVars(t.value, inner, false, headAcc);
      } else termVars(t.term, inner, false, headAcc);
      for (const [, name] of headAcc.needNames) errors.push(new RegoError('rego_unsafe_var_error', `var ${name} is unsafe`, e.loc));
      return;
    }
    forChildren(t, (c) => visit(c, extra));
  };
  const lit = e.lit;
  if (lit.k === 'every') {
    const inner = new Set(bound);
    const acc = newAcc();
    if (lit.key) termVars(lit.key, inner, true, acc);
    termVars(lit.value, inner, true, acc);
    for (const o of acc.outs) inner.add(o);
    visit(lit.domain, new Set());
    lit.body = reorderBody(lit.body, inner, errors);
    return;
  }
  visitLiteralTerms(lit, (t) => visit(t, new Set()), false);
  for (const w of e.with ?? []) visit(w.value, new Set());
}

function forChildren(t: Term, f: (c: Term) => void): void {
  switch (t.k) {
    case 'ref':
      if (typeof t.root !== 'string') f(t.root);
      t.path.forEach(f);
      return;
    case 'arr':
    case 'set':
      t.items.forEach(f);
      return;
    case 'obj':
      t.entries.forEach(([k, v]) => {
        f(k);
        f(v);
      });
      return;
    case 'call':
      t.args.forEach(f);
      return;
    case 'tmpl':
      t.parts.forEach(f);
      return;
    default:
      return;
  }
}

function visitLiteralTerms(lit: Literal, f: (t: Term) => void, deep = true): void {
  const walk = (t: Term): void => {
    f(t);
    if (deep) forChildren(t, walk);
  };
  switch (lit.k) {
    case 'term':
      walk(lit.t);
      return;
    case 'unify':
      walk(lit.a);
      walk(lit.b);
      return;
    case 'call':
      lit.args.forEach(walk);
      if (lit.out) walk(lit.out);
      return;
    case 'somein':
      if (lit.key) walk(lit.key);
      walk(lit.value);
      walk(lit.domain);
      return;
    case 'every':
      walk(lit.domain);
      return;
  }
}

/** Every slot mentioned in a term, nested bodies included. */
export function collectSlots(t: Term, out: Set<number>): void {
  switch (t.k) {
    case 'var':
      out.add(t.slot);
      return;
    case 'acomp':
    case 'scomp':
      collectSlots(t.term, out);
      collectBodySlots(t.body, out);
      return;
    case 'ocomp':
      collectSlots(t.key, out);
      collectSlots(t.value, out);
      collectBodySlots(t.body, out);
      return;
    default:
      forChildren(t, (c) => collectSlots(c, out));
  }
}

export function collectBodySlots(body: Body, out: Set<number>): void {
  for (const e of body) {
    const lit = e.lit;
    visitLiteralTerms(lit, (t) => collectSlots(t, out), false);
    if (lit.k === 'every') {
      if (lit.key) collectSlots(lit.key, out);
      collectSlots(lit.value, out);
      collectBodySlots(lit.body, out);
    }
    for (const w of e.with ?? []) collectSlots(w.value, out);
  }
}

/** Slots a comprehension reads from its enclosing body, with their names. */
function freeVars(t: Term & { own: { from: number; to: number } }): Map<number, string> {
  const names = new Map<number, string>();
  const record = (x: Term): void => {
    if (x.k === 'var') {
      if ((x.slot < t.own.from || x.slot >= t.own.to) && x.name !== '_') names.set(x.slot, x.name);
      return;
    }
    if (x.k === 'acomp' || x.k === 'scomp') {
      record(x.term);
      bodyTerms(x.body, record);
      return;
    }
    if (x.k === 'ocomp') {
      record(x.key);
      record(x.value);
      bodyTerms(x.body, record);
      return;
    }
    forChildren(x, record);
  };
  if (t.k === 'ocomp') {
    record(t.key);
    record(t.value);
  } else if (t.k === 'acomp' || t.k === 'scomp') record(t.term);
  if (t.k === 'acomp' || t.k === 'scomp' || t.k === 'ocomp') bodyTerms(t.body, record);
  return names;
}

function freeVarsOfBody(body: Body, own: { from: number; to: number }): Map<number, string> {
  return freeVars({ k: 'acomp', term: { k: 'val', v: null }, body, own });
}

function bodyTerms(body: Body, f: (t: Term) => void): void {
  for (const e of body) {
    visitLiteralTerms(e.lit, f, false);
    if (e.lit.k === 'every') {
      if (e.lit.key) f(e.lit.key);
      f(e.lit.value);
      bodyTerms(e.lit.body, f);
    }
    for (const w of e.with ?? []) f(w.value);
  }
}

/** For each negated expression: the slots that appear nowhere else in the body or the head. */
function negationLocals(body: Body, headUses: ReadonlySet<number>): Map<Expr, Set<number>> {
  const out = new Map<Expr, Set<number>>();
  const counts = new Map<number, number>();
  const per = body.map((e) => {
    const s = new Set<number>();
    collectBodySlots([e], s);
    for (const x of s) counts.set(x, (counts.get(x) ?? 0) + 1);
    return s;
  });
  body.forEach((e, i) => {
    if (!e.negated) return;
    const local = new Set<number>();
    for (const s of per[i]!) if (counts.get(s) === 1 && !headUses.has(s)) local.add(s);
    out.set(e, local);
  });
  return out;
}

type Shape = { kind: 'array'; length: number } | { kind: 'object'; keys: string[] | undefined } | undefined;

function shapeOf(t: Term): Shape {
  if (t.k === 'arr') return { kind: 'array', length: t.items.length };
  if (t.k === 'obj') {
    const keys = t.entries.map(([k]) => (k.k === 'val' && typeof k.v === 'string' ? k.v : undefined));
    return { kind: 'object', keys: keys.every((k) => k !== undefined) ? (keys as string[]).sort() : undefined };
  }
  if (t.k === 'val' && Array.isArray(t.v)) return { kind: 'array', length: (t.v as unknown[]).length };
  if (t.k === 'val' && t.v instanceof RegoObject) {
    const keys = t.v.keys();
    return { kind: 'object', keys: keys.every((k) => typeof k === 'string') ? (keys as string[]).sort() : undefined };
  }
  return undefined;
}

/** Two composite literals that no values can make equal (`[x] = {"a": 1}`, `[x, y] = [1, 2, 3]`). */
function shapeMismatch(a: Term, b: Term): boolean {
  const x = shapeOf(a);
  const y = shapeOf(b);
  if (!x || !y || (a.k === 'val' && b.k === 'val')) return false;
  if (x.kind !== y.kind) return true;
  if (x.kind === 'array' && y.kind === 'array') return x.length !== y.length;
  if (x.kind === 'object' && y.kind === 'object' && x.keys && y.keys) return x.keys.join('\u0000') !== y.keys.join('\u0000');
  return false;
}

/** `[a, b] = [c, d]` → `a = c`, `b = d` (likewise objects with the same constant keys). */
function splitUnifications(body: Body): Body {
  const out: Body = [];
  for (const e of body) {
    const lit = e.lit;
    if (lit.k === 'unify' && !e.negated && !e.with && !lit.assign) {
      const parts = splitPair(lit.a, lit.b);
      if (parts) {
        for (const [a, b] of parts) out.push({ ...e, lit: { k: 'unify', a, b, assign: false } });
        continue;
      }
    }
    out.push(e);
  }
  return out;
}

function splitPair(a: Term, b: Term): Array<[Term, Term]> | undefined {
  if (a.k === 'arr' && b.k === 'arr' && a.items.length === b.items.length) {
    return a.items.flatMap((x, i) => splitPair(x, b.items[i]!) ?? [[x, b.items[i]!] as [Term, Term]]);
  }
  if (a.k === 'arr' && b.k === 'val' && Array.isArray(b.v) && a.items.length === (b.v as unknown[]).length) {
    const vs = b.v as unknown[];
    return a.items.flatMap((x, i) => {
      const bt: Term = { k: 'val', v: vs[i] as never };
      return splitPair(x, bt) ?? [[x, bt] as [Term, Term]];
    });
  }
  if (b.k === 'arr' && a.k === 'val') return splitPair(b, a)?.map(([x, y]) => [y, x]);
  if (a.k === 'obj' && b.k === 'obj' && a.entries.length === b.entries.length) {
    const keyed = (t: typeof a) => {
      const m = new Map<string, Term>();
      for (const [k, v] of t.entries) {
        if (k.k !== 'val' || typeof k.v !== 'string') return undefined;
        m.set(k.v, v);
      }
      return m;
    };
    const ma = keyed(a);
    const mb = keyed(b);
    if (!ma || !mb || ma.size !== mb.size) return undefined;
    const out: Array<[Term, Term]> = [];
    for (const [k, x] of ma) {
      const y = mb.get(k);
      if (!y) return undefined;
      out.push(...(splitPair(x, y) ?? [[x, y] as [Term, Term]]));
    }
    return out;
  }
  return undefined;
}
