import { builtins, typeToString } from '../builtins/index.js';
import { admitsKind } from '../builtins/types.js';
import { RegoError } from '../errors.js';
import type { Location } from '../syntax/ast.js';
import { typeName } from '../value/index.js';
import type { Body, Callee, Rule, Term } from './ir.js';

/**
 * Type check of builtin calls: an argument whose value is known at compile time must be of a kind
 * the builtin's declaration admits (`count(1)` is a rego_type_error, reported in OPA's shape).
 * Arguments computed at run time are checked by the builtin registry when called.
 */
export function checkBuiltinCalls(rules: Iterable<Rule>, errors: RegoError[]): void {
  for (const rule of rules) {
    for (let r: Rule | undefined = rule; r; r = r.else) {
      const at = r.loc;
      body(r.body, errors);
      for (const t of [...r.keys, r.value, ...r.args]) term(t, errors, at);
    }
  }
}

export function checkBodyCalls(b: Body, errors: RegoError[]): void {
  body(b, errors);
}

function body(b: Body, errors: RegoError[]): void {
  for (const e of b) {
    const lit = e.lit;
    switch (lit.k) {
      case 'term':
        term(lit.t, errors, e.loc);
        break;
      case 'unify':
        term(lit.a, errors, e.loc);
        term(lit.b, errors, e.loc);
        break;
      case 'call':
        call(lit.fn, lit.args, errors, e.loc);
        lit.args.forEach((a) => term(a, errors, e.loc));
        break;
      case 'somein':
        term(lit.domain, errors, e.loc);
        break;
      case 'every':
        term(lit.domain, errors, e.loc);
        body(lit.body, errors);
        break;
    }
    for (const w of e.with ?? []) term(w.value, errors, e.loc);
  }
}

function term(t: Term, errors: RegoError[], loc: Location): void {
  switch (t.k) {
    case 'call':
      call(t.fn, t.args, errors, t.loc ?? loc);
      t.args.forEach((a) => term(a, errors, loc));
      return;
    case 'ref':
      if (typeof t.root !== 'string') term(t.root, errors, loc);
      t.path.forEach((p) => term(p, errors, loc));
      return;
    case 'arr':
    case 'set':
      t.items.forEach((i) => term(i, errors, loc));
      return;
    case 'obj':
      t.entries.forEach(([k, v]) => {
        term(k, errors, loc);
        term(v, errors, loc);
      });
      return;
    case 'acomp':
    case 'scomp':
      term(t.term, errors, loc);
      body(t.body, errors);
      return;
    case 'ocomp':
      term(t.key, errors, loc);
      term(t.value, errors, loc);
      body(t.body, errors);
      return;
    case 'tmpl':
      t.parts.forEach((p) => term(p, errors, loc));
      return;
    default:
      return;
  }
}

function call(fn: Callee, args: readonly Term[], errors: RegoError[], loc: Location): void {
  if (fn.k !== 'builtin') return;
  const decl = builtins.get(fn.name)?.decl;
  if (!decl) return;
  const bad = args.some((a, i) => a.k === 'val' && i < decl.args.length && !admitsKind(decl.args[i]!, a.v));
  if (!bad) return;
  const have = args.map((a) => (a.k === 'val' ? typeName(a.v) : 'any')).join(', ');
  const want = decl.args.map(typeToString).join(', ');
  errors.push(new RegoError('rego_type_error', `${fn.name}: invalid argument(s)\n\thave: (${have})\n\twant: (${want})`, loc));
}
