import { RegoObject, RegoSet, compare, num, typeName, type RegoNumber, type Value } from '../value/index.js';
import { OperandTypeError, defineBuiltins } from './registry.js';
import { elements, runeLength } from './operands.js';
import { T, anyArray, anyObject, anySet } from './types.js';

const numberCollection = T.union(anySet, anyArray);
const collection = T.union(anyArray, anySet);

function numbersOf(v: Value): RegoNumber[] {
  const items = elements(v);
  for (const x of items)
    if (!num.isNumber(x))
      throw new OperandTypeError(
        `operand 1 must be ${typeName(v)} of numbers but got ${typeName(v)} containing ${typeName(x)}`,
      );
  return items as RegoNumber[];
}

function extreme(v: Value, sign: number): Value | undefined {
  const items = elements(v);
  if (items.length === 0) return undefined;
  let best = items[0]!;
  for (let i = 1; i < items.length; i++) if (compare(items[i]!, best) * sign > 0) best = items[i]!;
  return best;
}

function booleans(v: Value): Value[] {
  return elements(v) as Value[];
}

export const aggregates = defineBuiltins(
  {
    name: 'count',
    decl: T.fn([T.union(anyArray, anyObject, anySet, T.string)], T.number),
    impl: ([v]) => {
      if (typeof v === 'string') return runeLength(v);
      if (Array.isArray(v)) return v.length;
      return (v as RegoObject | RegoSet).size;
    },
  },
  {
    name: 'sum',
    decl: T.fn([numberCollection], T.number),
    impl: ([v]) => numbersOf(v!).reduce<RegoNumber>((acc, x) => num.add(acc, x), 0),
  },
  {
    name: 'product',
    decl: T.fn([numberCollection], T.number),
    impl: ([v]) => numbersOf(v!).reduce<RegoNumber>((acc, x) => num.multiply(acc, x), 1),
  },
  { name: 'max', decl: T.fn([numberCollection], T.any), impl: ([v]) => extreme(v!, 1) },
  { name: 'min', decl: T.fn([numberCollection], T.any), impl: ([v]) => extreme(v!, -1) },
  {
    name: 'sort',
    decl: T.fn([collection], anyArray),
    impl: ([v]) => (v instanceof RegoSet ? [...v.values()] : [...(v as Value[])].sort(compare)),
  },
  {
    name: 'any',
    deprecated: true,
    decl: T.fn([numberCollection], T.boolean),
    impl: ([v]) => booleans(v!).some((x) => x === true),
  },
  {
    name: 'all',
    deprecated: true,
    decl: T.fn([numberCollection], T.boolean),
    impl: ([v]) => booleans(v!).every((x) => x === true),
  },
);
