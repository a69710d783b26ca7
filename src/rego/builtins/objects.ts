import { RegoObject, RegoSet, compare, equals, typeName, type ArrayValue, type Value } from '../value/index.js';
import { OperandTypeError, defineBuiltins } from './registry.js';
import { arr, obj } from './operands.js';
import { T, anyArray, anyObject, anySet } from './types.js';

/** Deep merge where `b` wins, merging nested objects (object.union). */
export function mergeWithOverwrite(a: RegoObject, b: RegoObject): RegoObject {
  if (equals(a, b)) return a;
  const out = a.copy();
  for (const [k, v] of b.entries()) {
    const old = a.get(k);
    out.set(k, old instanceof RegoObject && v instanceof RegoObject ? mergeWithOverwrite(old, v) : v);
  }
  return out;
}

/** Keys named by an array, set or object (its keys). */
function keySet(v: Value, position: number): RegoSet {
  if (Array.isArray(v)) return new RegoSet(v as ArrayValue);
  if (v instanceof RegoSet) return v;
  if (v instanceof RegoObject) return new RegoSet(v.keys());
  throw new OperandTypeError(position, ['object', 'set', 'array'], v);
}

/** Follows a path of keys/indexes/members; undefined when any step is missing. */
function find(v: Value, path: ArrayValue): Value | undefined {
  let cur: Value | undefined = v;
  for (const step of path) {
    if (cur instanceof RegoObject) cur = cur.get(step);
    else if (Array.isArray(cur)) {
      cur = typeof step === 'number' && Number.isInteger(step) && step >= 0 ? (cur as ArrayValue)[step] : undefined;
    } else if (cur instanceof RegoSet) cur = cur.has(step) ? step : undefined;
    else return undefined;
    if (cur === undefined) return undefined;
  }
  return cur;
}

function objectSubset(sup: RegoObject, sub: RegoObject): boolean {
  for (const [k, subVal] of sub.entries()) {
    const supVal = sup.get(k);
    if (supVal === undefined) return false;
    if (equals(subVal, supVal)) continue;
    if (supVal instanceof RegoObject && subVal instanceof RegoObject) {
      if (!objectSubset(supVal, subVal)) return false;
    } else if (supVal instanceof RegoSet && subVal instanceof RegoSet) {
      if (!setSubset(supVal, subVal)) return false;
    } else if (Array.isArray(supVal) && Array.isArray(subVal)) {
      if (!arraySubset(supVal, subVal)) return false;
    } else return false;
  }
  return true;
}

function setSubset(sup: RegoSet, sub: RegoSet): boolean {
  return sub.values().every((m) => sup.has(m));
}

/** `sub` appears contiguously in `sup`. */
function arraySubset(sup: ArrayValue, sub: ArrayValue): boolean {
  if (sub.length > sup.length) return false;
  outer: for (let i = 0; i + sub.length <= sup.length; i++) {
    for (let j = 0; j < sub.length; j++) if (compare(sup[i + j]!, sub[j]!) !== 0) continue outer;
    return true;
  }
  return false;
}

/** Every member of `sub` occurs in `sup` (as OPA computes it: false for an empty array). */
function arraySetSubset(sup: ArrayValue, sub: RegoSet): boolean {
  let unmatched = sub.size;
  for (const x of sup) {
    if (sub.has(x)) unmatched--;
    if (unmatched === 0) return true;
  }
  return false;
}

const collection = T.union(anyObject, anySet, anyArray);

export const objects = defineBuiltins(
  {
    name: 'object.union',
    decl: T.fn([anyObject, anyObject], T.any),
    impl: ([a, b]) => mergeWithOverwrite(obj(a!), obj(b!)),
  },
  {
    name: 'object.union_n',
    decl: T.fn([T.arrayOf(anyObject)], T.any),
    impl: ([list]) => {
      let out = new RegoObject();
      for (const o of arr(list!)) {
        if (!(o instanceof RegoObject))
          throw new OperandTypeError(`operand 1 must be array of objects but got array containing ${typeName(o)}`);
        out = mergeWithOverwrite(out, o);
      }
      return out;
    },
  },
  {
    name: 'object.remove',
    decl: T.fn([anyObject, collection], T.any),
    impl: ([o, keys]) => {
      const remove = keySet(keys!, 2);
      const out = new RegoObject();
      for (const [k, v] of obj(o!).entries()) if (!remove.has(k)) out.set(k, v);
      return out;
    },
  },
  {
    name: 'object.filter',
    decl: T.fn([anyObject, collection], T.any),
    impl: ([o, keys]) => {
      const keep = keySet(keys!, 2);
      const source = obj(o!);
      const out = new RegoObject();
      for (const k of keep.values()) {
        const v = source.get(k);
        if (v !== undefined) out.set(k, v);
      }
      return out;
    },
  },
  {
    name: 'object.get',
    decl: T.fn([anyObject, T.any, T.any], T.any),
    impl: ([o, key, fallback]) => {
      if (!Array.isArray(key)) return obj(o!).get(key!) ?? fallback!;
      if ((key as ArrayValue).length === 0) return o!;
      return find(o!, key as ArrayValue) ?? fallback!;
    },
  },
  {
    name: 'object.keys',
    decl: T.fn([anyObject], anySet),
    impl: ([o]) => new RegoSet(obj(o!).keys()),
  },
  {
    name: 'object.subset',
    decl: T.fn([T.union(anyObject, anySet, anyArray), T.union(anyObject, anySet, anyArray)], T.any),
    impl: ([sup, sub]) => {
      if (sup instanceof RegoObject && sub instanceof RegoObject) return objectSubset(sup, sub);
      if (sup instanceof RegoSet && sub instanceof RegoSet) return setSubset(sup, sub);
      if (Array.isArray(sup) && Array.isArray(sub)) return arraySubset(sup, sub);
      if (Array.isArray(sup) && sub instanceof RegoSet) return arraySetSubset(sup, sub);
      throw new OperandTypeError('both arguments object.subset must be of the same type or array and set');
    },
  },
);
