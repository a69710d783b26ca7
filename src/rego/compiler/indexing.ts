import { keyOf, type Value } from '../value/index.js';
import type { Rule, Term } from './ir.js';
import type { RuleIndex } from './program.js';

/**
 * Rule indexing on equality: for rules whose bodies test `input.x.y == "const"` (or `=`) on the same
 * ref, evaluation looks the ref's value up and runs only the matching rules plus those that do not
 * test it. The ref tested by the most rules is chosen. Rules with `else` chains are not indexed.
 */
export function buildIndex(rules: readonly Rule[]): RuleIndex | undefined {
  const counts = new Map<string, number>();
  const tests = rules.map((r) => (r.else ? [] : equalityTests(r)));
  for (const t of tests) for (const x of t) counts.set(x.refKey, (counts.get(x.refKey) ?? 0) + 1);
  let best: string | undefined;
  let bestCount = 1;
  for (const [k, n] of counts) if (n > bestCount) [best, bestCount] = [k, n];
  if (best === undefined) return undefined;
  let root: 'input' | 'data' = 'input';
  let path: string[] = [];
  const byValue = new Map<string, Rule[]>();
  const always: Rule[] = [];
  rules.forEach((rule, i) => {
    const t = tests[i]!.find((x) => x.refKey === best);
    if (!t) {
      always.push(rule);
      return;
    }
    root = t.root;
    path = t.path;
    const key = keyOf(t.value);
    let list = byValue.get(key);
    if (!list) byValue.set(key, (list = []));
    list.push(rule);
  });
  // Every bucket also holds the rules that do not test the ref, in source order.
  if (always.length > 0) {
    const position = new Map(rules.map((r, i) => [r, i] as const));
    for (const [key, list] of byValue) byValue.set(key, [...list, ...always].sort((a, b) => position.get(a)! - position.get(b)!));
  }
  return { root, path, byValue, always };
}

interface EqualityTest {
  refKey: string;
  root: 'input' | 'data';
  path: string[];
  value: Value;
}

function equalityTests(rule: Rule): EqualityTest[] {
  const out: EqualityTest[] = [];
  for (const e of rule.body) {
    if (e.negated || e.with) continue;
    const lit = e.lit;
    let a: Term | undefined;
    let b: Term | undefined;
    if (lit.k === 'unify' && !lit.assign) [a, b] = [lit.a, lit.b];
    else if (lit.k === 'call' && lit.fn.k === 'builtin' && lit.fn.name === 'equal' && !lit.out) [a, b] = [lit.args[0], lit.args[1]];
    if (!a || !b) continue;
    const t = asTest(a, b) ?? asTest(b, a);
    if (t) out.push(t);
  }
  return out;
}

function asTest(ref: Term, value: Term): EqualityTest | undefined {
  if (ref.k !== 'ref' || value.k !== 'val' || typeof ref.root !== 'string') return undefined;
  const path: string[] = [];
  for (const p of ref.path) {
    if (p.k !== 'val' || typeof p.v !== 'string') return undefined;
    path.push(p.v);
  }
  return { refKey: ref.root + '.' + path.join('.'), root: ref.root, path, value: value.v };
}
