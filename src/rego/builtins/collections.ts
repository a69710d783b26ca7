import { RegoObject, RegoSet, equals, typeName, type ArrayValue, type Value } from '../value/index.js';
import { OperandTypeError, defineBuiltins } from './registry.js';
import { arr, elements, intOperand, set } from './operands.js';
import { T, anyArray, anySet } from './types.js';

function flatten(items: ArrayValue, out: Value[]): Value[] {
  for (const x of items) {
    if (Array.isArray(x)) flatten(x as ArrayValue, out);
    else out.push(x);
  }
  return out;
}

export const arrays = defineBuiltins(
  {
    name: 'array.concat',
    decl: T.fn([anyArray, anyArray], anyArray),
    impl: ([a, b]) => [...arr(a!), ...arr(b!)],
  },
  {
    name: 'array.slice',
    decl: T.fn([anyArray, T.number, T.number], anyArray),
    impl: ([a, start, stop]) => {
      const items = arr(a!);
      let from = intOperand(start!, 2);
      let to = intOperand(stop!, 3);
      if (from < 0) from = 0;
      if (to > items.length) to = items.length;
      if (from >= to) return [];
      return items.slice(from, to);
    },
  },
  { name: 'array.reverse', decl: T.fn([anyArray], anyArray), impl: ([a]) => [...arr(a!)].reverse() },
  { name: 'array.flatten', decl: T.fn([anyArray], anyArray), impl: ([a]) => flatten(arr(a!), []) },
);

function setsOf(v: Value): RegoSet[] {
  return elements(v).map((s) => {
    if (!(s instanceof RegoSet)) throw new OperandTypeError(`operand 1 must be set of sets but got set containing ${typeName(s)}`);
    return s;
  });
}

function intersect(sets: readonly RegoSet[]): RegoSet {
  if (sets.length === 0) return new RegoSet();
  const [first, ...rest] = [...sets].sort((a, b) => a.size - b.size);
  const out = new RegoSet();
  for (const m of first!.values()) if (rest.every((s) => s.has(m))) out.add(m);
  return out;
}

function unite(sets: readonly RegoSet[]): RegoSet {
  const out = new RegoSet();
  for (const s of sets) for (const m of s.values()) out.add(m);
  return out;
}

export const sets = defineBuiltins(
  { name: 'and', infix: '&', decl: T.fn([anySet, anySet], anySet), impl: ([a, b]) => intersect([set(a!), set(b!)]) },
  { name: 'or', infix: '|', decl: T.fn([anySet, anySet], anySet), impl: ([a, b]) => unite([set(a!), set(b!)]) },
  { name: 'intersection', decl: T.fn([T.setOf(anySet)], anySet), impl: ([s]) => intersect(setsOf(s!)) },
  { name: 'union', decl: T.fn([T.setOf(anySet)], anySet), impl: ([s]) => unite(setsOf(s!)) },
  {
    name: 'set_diff',
    deprecated: true,
    decl: T.fn([anySet, anySet], anySet),
    impl: ([a, b]) => new RegoSet(set(a!).values().filter((m) => !set(b!).has(m))),
  },
);

/** Whether `x` is a member (value) of a collection, as `x in xs` means it. */
function member(x: Value, coll: Value): boolean {
  if (coll instanceof RegoSet) return coll.has(x);
  if (Array.isArray(coll)) return (coll as ArrayValue).some((y) => equals(x, y));
  if (coll instanceof RegoObject) return coll.values().some((y) => equals(x, y));
  return false;
}

/** Whether `k` maps to `v` in a collection, as `k, v in xs` means it. */
function memberAt(k: Value, v: Value, coll: Value): boolean {
  if (coll instanceof RegoObject) {
    const w = coll.get(k);
    return w !== undefined && equals(v, w);
  }
  if (Array.isArray(coll)) {
    const items = coll as ArrayValue;
    return typeof k === 'number' && Number.isInteger(k) && k >= 0 && k < items.length && equals(items[k]!, v);
  }
  if (coll instanceof RegoSet) return equals(k, v) && coll.has(k);
  return false;
}

/**
 * Unification, assignment and membership. The evaluator implements `=`, `:=` and `in` itself
 * (they bind variables); these entries declare them for the compiler and capabilities, and
 * evaluate them on ground operands.
 */
export const operators = defineBuiltins(
  { name: 'eq', infix: '=', decl: T.fn([T.any, T.any], T.boolean), impl: ([a, b]) => equals(a!, b!) },
  { name: 'assign', infix: ':=', decl: T.fn([T.any, T.any], T.boolean), impl: ([a, b]) => equals(a!, b!) },
  {
    name: 'internal.member_2',
    infix: 'in',
    decl: T.fn([T.any, T.any], T.boolean),
    impl: ([x, coll]) => member(x!, coll!),
  },
  {
    name: 'internal.member_3',
    infix: 'in',
    decl: T.fn([T.any, T.any, T.any], T.boolean),
    impl: ([k, v, coll]) => memberAt(k!, v!, coll!),
  },
);
