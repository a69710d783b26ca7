import { RegoSet, compare, equals, num, type Value } from '../value/index.js';
import { BuiltinError, OperandTypeError, defineBuiltins, type BuiltinContext } from './registry.js';
import { bigIntOperand, intOperand, numOf, set } from './operands.js';
import { T, anySet } from './types.js';

const binaryNumber = T.fn([T.number, T.number], T.number);
const unaryNumber = T.fn([T.number], T.number);
const comparison = T.fn([T.any, T.any], T.boolean);
const bitwise = T.fn([T.number, T.number], T.number);

/** Comparison operators (`==`, `<`, …) in OPA's total order. */
export const comparisons = defineBuiltins(
  { name: 'equal', infix: '==', decl: comparison, impl: ([a, b]) => equals(a!, b!) },
  { name: 'neq', infix: '!=', decl: comparison, impl: ([a, b]) => !equals(a!, b!) },
  { name: 'lt', infix: '<', decl: comparison, impl: ([a, b]) => compare(a!, b!) < 0 },
  { name: 'lte', infix: '<=', decl: comparison, impl: ([a, b]) => compare(a!, b!) <= 0 },
  { name: 'gt', infix: '>', decl: comparison, impl: ([a, b]) => compare(a!, b!) > 0 },
  { name: 'gte', infix: '>=', decl: comparison, impl: ([a, b]) => compare(a!, b!) >= 0 },
);

const numberOrSet = T.union(T.number, anySet);

/** Arithmetic with OPA's number semantics (see value/number.ts). */
export const arithmetic = defineBuiltins(
  { name: 'plus', infix: '+', decl: binaryNumber, impl: ([a, b]) => num.add(numOf(a!), numOf(b!)) },
  {
    name: 'minus',
    infix: '-',
    decl: T.fn([numberOrSet, numberOrSet], numberOrSet),
    impl: ([a, b]) => {
      const n1 = num.isNumber(a);
      const n2 = num.isNumber(b);
      if (n1 && n2) return num.subtract(a, b);
      const s1 = a instanceof RegoSet;
      if (s1 && b instanceof RegoSet) {
        const out = new RegoSet();
        for (const m of set(a!).values()) if (!b.has(m)) out.add(m);
        return out;
      }
      if (!n1 && !s1) throw new OperandTypeError(1, ['number', 'set'], a!);
      if (n2) throw new OperandTypeError(2, 'set', b!);
      throw new OperandTypeError(2, 'number', b!);
    },
  },
  { name: 'mul', infix: '*', decl: binaryNumber, impl: ([a, b]) => num.multiply(numOf(a!), numOf(b!)) },
  {
    name: 'div',
    infix: '/',
    decl: binaryNumber,
    impl: ([a, b]) => {
      const q = num.divide(numOf(a!), numOf(b!));
      if (q === undefined) throw new BuiltinError('divide by zero');
      return q;
    },
  },
  {
    name: 'rem',
    infix: '%',
    decl: binaryNumber,
    impl: ([a, b]) => {
      const r = num.remainder(numOf(a!), numOf(b!));
      if (typeof r === 'string') throw new BuiltinError(r);
      return r;
    },
  },
  { name: 'abs', decl: unaryNumber, impl: ([a]) => num.abs(numOf(a!)) },
  { name: 'round', decl: unaryNumber, impl: ([a]) => num.round(numOf(a!)) },
  { name: 'ceil', decl: unaryNumber, impl: ([a]) => num.ceil(numOf(a!)) },
  { name: 'floor', decl: unaryNumber, impl: ([a]) => num.floor(numOf(a!)) },
);

/** Bitwise operations on integers of any size. */
export const bits = defineBuiltins(
  { name: 'bits.or', decl: bitwise, impl: ([a, b]) => num.fromBigInt(bigIntOperand(a!, 1) | bigIntOperand(b!, 2)) },
  { name: 'bits.and', decl: bitwise, impl: ([a, b]) => num.fromBigInt(bigIntOperand(a!, 1) & bigIntOperand(b!, 2)) },
  { name: 'bits.xor', decl: bitwise, impl: ([a, b]) => num.fromBigInt(bigIntOperand(a!, 1) ^ bigIntOperand(b!, 2)) },
  { name: 'bits.negate', decl: unaryNumber, impl: ([a]) => num.fromBigInt(~bigIntOperand(a!, 1)) },
  {
    name: 'bits.lsh',
    decl: bitwise,
    impl: ([a, b]) => {
      const x = bigIntOperand(a!, 1);
      const s = bigIntOperand(b!, 2);
      if (s < 0n) throw new OperandTypeError('operand 2 must be an unsigned integer number but got a negative integer');
      return num.fromBigInt(x << s);
    },
  },
  {
    name: 'bits.rsh',
    decl: bitwise,
    impl: ([a, b]) => {
      const x = bigIntOperand(a!, 1);
      const s = bigIntOperand(b!, 2);
      if (s < 0n) throw new OperandTypeError('operand 2 must be an unsigned integer number but got a negative integer');
      return num.fromBigInt(x >> s);
    },
  },
);

/** Inclusive range; long ranges check for cancellation as they grow. */
function range(from: bigint, to: bigint, step: bigint, ctx: BuiltinContext): Value[] {
  const out: Value[] = [];
  const down = from > to;
  for (let i = from; down ? i >= to : i <= to; i += down ? -step : step) {
    if ((out.length & 0xfff) === 0xfff) ctx.checkCancelled();
    out.push(num.fromBigInt(i));
  }
  return out;
}

export const numbers = defineBuiltins(
  {
    name: 'numbers.range',
    decl: T.fn([T.number, T.number], T.arrayOf(T.number)),
    impl: ([a, b], ctx) => range(bigIntOperand(a!, 1), bigIntOperand(b!, 2), 1n, ctx),
  },
  {
    name: 'numbers.range_step',
    decl: T.fn([T.number, T.number, T.number], T.arrayOf(T.number)),
    impl: ([a, b, c], ctx) => {
      const step = bigIntOperand(c!, 3);
      if (step <= 0n) throw new BuiltinError('step must be a positive number above zero');
      return range(bigIntOperand(a!, 1), bigIntOperand(b!, 2), step, ctx);
    },
  },
  {
    name: 'rand.intn',
    decl: T.fn([T.string, T.number], T.number),
    nondeterministic: true,
    impl: ([s, n], ctx) => {
      const limit = intOperand(n!, 2);
      if (limit === 0) return 0;
      const key = `rand.intn\u0000${s as string}\u0000${limit}`;
      let v = ctx.cache.get(key) as number | undefined;
      if (v === undefined) {
        v = Math.floor(Math.random() * Math.abs(limit));
        ctx.cache.set(key, v);
      }
      return v;
    },
  },
);

