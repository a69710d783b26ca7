/**
 * Rego numbers.
 *
 * OPA keeps a number as the decimal text it was written with and does exact arithmetic where it can.
 * We keep two representations with one invariant, so that equal numbers always have the same form:
 *
 * - a JS `number` (the fast, common case) denotes the decimal value of its shortest text `String(n)`;
 * - a `BigNum` (decimal `mant × 10^exp`) holds every value that no JS number denotes exactly:
 *   integers beyond 2^53 that a double cannot hold, decimals with more digits than a double keeps.
 *
 * `makeNumber` / `parseNumber` normalise to that form, so `===` on JS numbers and the canonical key are
 * enough for equality. -0 is normalised to 0. NaN and infinities are never Rego numbers.
 */
export class BigNum {
  /** `mant` has no trailing decimal zeros and is never 0. */
  constructor(
    readonly mant: bigint,
    readonly exp: number,
  ) {}

  toString(): string {
    return decimalText(this.mant, this.exp);
  }
}

export type RegoNumber = number | BigNum;

export function isNumber(v: unknown): v is RegoNumber {
  return typeof v === 'number' || v instanceof BigNum;
}

/** A decimal `mant × 10^exp`; the working form of slow-path arithmetic. */
export interface Decimal {
  mant: bigint;
  exp: number;
}

const NUMBER_TEXT = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$/;

/** Parses JSON/Rego number text exactly; undefined when the text is not a number. */
export function parseNumber(text: string): RegoNumber | undefined {
  if (!NUMBER_TEXT.test(text)) return undefined;
  const n = Number(text);
  // Most texts are short integers or short decimals that a double represents and prints back.
  if (text.length <= 15 && Number.isFinite(n) && !/[eE]/.test(text)) {
    const digits = text.replace(/^-/, '').replace('.', '').replace(/^0+/, '');
    if (digits.length <= 15) return n === 0 ? 0 : n;
  }
  return fromDecimal(decimalOfText(text));
}

/** Parses permissive decimal text (leading `+`, `.5`, `5.`, surrounding spaces not allowed). */
export function parseNumberLoose(text: string): RegoNumber | undefined {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return undefined;
  const digits = (m[2] ?? '') + (m[3] ?? '');
  const exp = Number(m[4] ?? 0) - (m[3] ?? '').length;
  if (!Number.isFinite(exp)) return undefined;
  const mant = BigInt(digits === '' ? '0' : digits);
  return fromDecimal({ mant: m[1] === '-' ? -mant : mant, exp });
}

function decimalOfText(text: string): Decimal {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([-+]?\d+))?$/.exec(text);
  if (!m) throw new Error(`not a number: ${text}`);
  const frac = m[3] ?? '';
  const mant = BigInt(m[2]! + frac);
  return normalizeDecimal({ mant: m[1] === '-' ? -mant : mant, exp: Number(m[4] ?? 0) - frac.length });
}

function normalizeDecimal(d: Decimal): Decimal {
  let { mant, exp } = d;
  if (mant === 0n) return { mant: 0n, exp: 0 };
  while (mant % 10n === 0n) {
    mant /= 10n;
    exp++;
  }
  return { mant, exp };
}

/** The exact decimal a Rego number denotes. */
export function toDecimal(n: RegoNumber): Decimal {
  if (typeof n !== 'number') return { mant: n.mant, exp: n.exp };
  if (Number.isSafeInteger(n)) return normalizeDecimal({ mant: BigInt(n), exp: 0 });
  return decimalOfText(jsNumberText(n));
}

/** Normalises an exact decimal to the canonical representation. */
export function fromDecimal(d: Decimal): RegoNumber {
  const { mant, exp } = normalizeDecimal(d);
  if (mant === 0n) return 0;
  if (exp >= 0 && exp <= 16) {
    const big = mant * 10n ** BigInt(exp);
    if (big <= MAX_SAFE && big >= -MAX_SAFE) return Number(big);
  }
  const text = decimalText(mant, exp);
  const n = Number(text);
  if (Number.isFinite(n) && n !== 0) {
    const back = decimalOfText(jsNumberText(n));
    if (back.mant === mant && back.exp === exp) return n;
  }
  return new BigNum(mant, exp);
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

export function fromBigInt(i: bigint): RegoNumber {
  if (i <= MAX_SAFE && i >= -MAX_SAFE) return Number(i);
  return fromDecimal({ mant: i, exp: 0 });
}

/** Converts a finite JS number; callers must reject NaN/Infinity first. */
export function fromJSNumber(n: number): number {
  return n === 0 ? 0 : n;
}

/** Shortest round-trip text of a double; the decimal value a JS number denotes. */
function jsNumberText(n: number): string {
  return String(n);
}

export function decimalText(mant: bigint, exp: number): string {
  const neg = mant < 0n;
  const digits = (neg ? -mant : mant).toString();
  let out: string;
  if (exp >= 0) {
    out = exp > 30 ? `${digits}e+${exp}` : digits + '0'.repeat(exp);
  } else {
    const point = digits.length + exp;
    if (point > 0) out = `${digits.slice(0, point)}.${digits.slice(point)}`;
    else if (point > -20) out = `0.${'0'.repeat(-point)}${digits}`;
    else out = `${digits[0]}${digits.length > 1 ? '.' + digits.slice(1) : ''}e${point - 1}`;
  }
  return neg ? '-' + out : out;
}

/** Number text as OPA renders it in JSON output: integers in full, other numbers as shortest text. */
export function numberText(n: RegoNumber): string {
  if (typeof n === 'number') {
    if (Math.abs(n) < 1e21 || !Number.isInteger(n)) return String(n);
    const d = toDecimal(n);
    return (d.mant * 10n ** BigInt(d.exp)).toString();
  }
  const { mant, exp } = n;
  if (exp >= 0 && exp <= 400) return (mant * 10n ** BigInt(exp)).toString();
  return decimalText(mant, exp);
}

/** Total numeric order. */
export function compareNumbers(a: RegoNumber, b: RegoNumber): number {
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  return compareDecimals(toDecimal(a), toDecimal(b));
}

export function compareDecimals(a: Decimal, b: Decimal): number {
  const sa = a.mant < 0n ? -1 : a.mant > 0n ? 1 : 0;
  const sb = b.mant < 0n ? -1 : b.mant > 0n ? 1 : 0;
  if (sa !== sb) return sa < sb ? -1 : 1;
  if (sa === 0) return 0;
  const e = Math.min(a.exp, b.exp);
  const x = a.mant * 10n ** BigInt(a.exp - e);
  const y = b.mant * 10n ** BigInt(b.exp - e);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function isInteger(n: RegoNumber): boolean {
  return typeof n === 'number' ? Number.isInteger(n) : n.exp >= 0;
}

/** The integer value, or undefined when `n` has a fractional part. */
export function toBigInt(n: RegoNumber): bigint | undefined {
  if (typeof n === 'number') {
    if (!Number.isInteger(n)) return undefined;
    if (Number.isSafeInteger(n)) return BigInt(n);
    const d = toDecimal(n);
    return d.exp >= 0 ? d.mant * 10n ** BigInt(d.exp) : undefined;
  }
  return n.exp >= 0 ? n.mant * 10n ** BigInt(n.exp) : undefined;
}

/** A JS double approximating `n` (exact for JS numbers). */
export function toFloat(n: RegoNumber): number {
  return typeof n === 'number' ? n : Number(decimalText(n.mant, n.exp));
}

/** Safe-integer value or undefined; what most integer-taking builtins need. */
export function toSafeInteger(n: RegoNumber): number | undefined {
  return typeof n === 'number' && Number.isSafeInteger(n) ? n : undefined;
}

// ---- arithmetic -------------------------------------------------------------------------------
//
// OPA's arithmetic, reproduced: operands that are integers in the int32 window use machine
// arithmetic; other integers are exact big integers (after OPA's conversion through a 64-bit-mantissa
// float, which only changes integers needing more than 64 significant bits); everything else is a
// binary float with a 64-bit mantissa (Go's big.Float default), printed back as the shortest decimal
// that identifies it. JS numbers that are safe integers take the fast path.

/** A binary float `m × 2^e` with |m| < 2^64 (or 0), as Go's big.Float at precision 64. */
interface BinFloat {
  m: bigint;
  e: number;
}

const PRECISION = 64;
const TWO_P = 1n << BigInt(PRECISION);
const TWO_P1 = 1n << BigInt(PRECISION - 1);

function bitLength(i: bigint): number {
  return (i < 0n ? -i : i).toString(2).length;
}

/** Rounds the rational num/den (den > 0) to a 64-bit mantissa, half to even. */
function roundRational(num: bigint, den: bigint): BinFloat {
  if (num === 0n) return { m: 0n, e: 0 };
  const neg = num < 0n;
  const n = neg ? -num : num;
  let e = bitLength(n) - bitLength(den) - PRECISION;
  for (;;) {
    const scaledNum = e < 0 ? n << BigInt(-e) : n;
    const scaledDen = e > 0 ? den << BigInt(e) : den;
    let m = scaledNum / scaledDen;
    if (m >= TWO_P) {
      e++;
      continue;
    }
    if (m < TWO_P1) {
      e--;
      continue;
    }
    const r = scaledNum % scaledDen;
    const twice = 2n * r;
    if (twice > scaledDen || (twice === scaledDen && (m & 1n) === 1n)) m += 1n;
    if (m === TWO_P) {
      m >>= 1n;
      e++;
    }
    return { m: neg ? -m : m, e };
  }
}

function decimalToBin(d: Decimal): BinFloat {
  return d.exp >= 0
    ? roundRational(d.mant * 10n ** BigInt(d.exp), 1n)
    : roundRational(d.mant, 10n ** BigInt(-d.exp));
}

function binToRational(f: BinFloat): [bigint, bigint] {
  return f.e >= 0 ? [f.m << BigInt(f.e), 1n] : [f.m, 1n << BigInt(-f.e)];
}

/** The shortest decimal that rounds back to `f` at 64-bit precision (Go's `Text('g', -1)`). */
function binToNumber(f: BinFloat): RegoNumber {
  if (f.m === 0n) return 0;
  if (f.e >= 0) return fromBigInt(f.m << BigInt(f.e));
  // exact decimal: m × 2^e = m × 5^-e × 10^e
  const exact: Decimal = { mant: f.m * 5n ** BigInt(-f.e), exp: f.e };
  for (let digits = 1; digits <= 25; digits++) {
    const candidate = roundSignificant(exact, digits);
    const back = decimalToBin(candidate);
    if (back.m === f.m && back.e === f.e) return fromDecimal(candidate);
    // normalise representation differences (e.g. m even) by comparing values
    const [bn, bd] = binToRational(back);
    const [fn, fd] = binToRational(f);
    if (bn * fd === fn * bd) return fromDecimal(candidate);
  }
  return fromDecimal(exact);
}

function toBin(n: RegoNumber): BinFloat {
  return decimalToBin(toDecimal(n));
}

function isSmallInt(n: RegoNumber): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n >= -2147483648 && n <= 2147483647;
}

/** OPA's integer view of a number: rounded through 64-bit-mantissa float; undefined if fractional. */
function opaInt(n: RegoNumber): bigint | undefined {
  if (typeof n === 'number' && Number.isSafeInteger(n)) return BigInt(n);
  if (!isInteger(n)) return undefined;
  const f = toBin(n);
  const [num, den] = binToRational(f);
  return den === 1n ? num : undefined;
}

type BinOp = (x: BinFloat, y: BinFloat) => BinFloat;

const floatAdd: BinOp = (x, y) => {
  const e = Math.min(x.e, y.e);
  return shift((x.m << BigInt(x.e - e)) + (y.m << BigInt(y.e - e)), e);
};

function shift(m: bigint, e: number): BinFloat {
  const r = roundRational(m, 1n);
  return { m: r.m, e: r.e + e };
}

const floatMul: BinOp = (x, y) => shift(x.m * y.m, x.e + y.e);

function floatQuo(x: BinFloat, y: BinFloat): BinFloat {
  let num = x.m;
  let den = y.m;
  if (den < 0n) {
    num = -num;
    den = -den;
  }
  const r = roundRational(num, den);
  return { m: r.m, e: r.e + x.e - y.e };
}

function floatOp(a: RegoNumber, b: RegoNumber, op: BinOp): RegoNumber {
  return binToNumber(op(toBin(a), toBin(b)));
}

function exactOrFloat(
  a: RegoNumber,
  b: RegoNumber,
  exact: (x: bigint, y: bigint) => bigint,
  op: BinOp,
): RegoNumber {
  const x = opaInt(a);
  const y = x === undefined ? undefined : opaInt(b);
  if (x !== undefined && y !== undefined) return fromBigInt(exact(x, y));
  return floatOp(a, b, op);
}

export function add(a: RegoNumber, b: RegoNumber): RegoNumber {
  if (typeof a === 'number' && typeof b === 'number' && Number.isInteger(a) && Number.isInteger(b)) {
    const r = a + b;
    if (Number.isSafeInteger(r)) return r === 0 ? 0 : r;
  }
  return exactOrFloat(a, b, (x, y) => x + y, floatAdd);
}

export function subtract(a: RegoNumber, b: RegoNumber): RegoNumber {
  if (typeof a === 'number' && typeof b === 'number' && Number.isInteger(a) && Number.isInteger(b)) {
    const r = a - b;
    if (Number.isSafeInteger(r)) return r === 0 ? 0 : r;
  }
  return exactOrFloat(a, b, (x, y) => x - y, (x, y) => floatAdd(x, { m: -y.m, e: y.e }));
}

export function multiply(a: RegoNumber, b: RegoNumber): RegoNumber {
  if (typeof a === 'number' && typeof b === 'number' && Number.isInteger(a) && Number.isInteger(b)) {
    const r = a * b;
    if (Number.isSafeInteger(r)) return r === 0 ? 0 : r;
  }
  return exactOrFloat(a, b, (x, y) => x * y, floatMul);
}

/** Division; undefined for a zero divisor (the caller reports `divide by zero`). */
export function divide(a: RegoNumber, b: RegoNumber): RegoNumber | undefined {
  if (sign(b) === 0) return undefined;
  if (isSmallInt(a) && isSmallInt(b) && a !== 0 && a % b === 0) return a / b;
  return floatOp(a, b, floatQuo);
}

export function negate(a: RegoNumber): RegoNumber {
  if (typeof a === 'number') return a === 0 ? 0 : -a;
  return new BigNum(-a.mant, a.exp);
}

export function sign(a: RegoNumber): number {
  if (typeof a === 'number') return a < 0 ? -1 : a > 0 ? 1 : 0;
  return a.mant < 0n ? -1 : 1;
}

function digitCount(i: bigint): number {
  return (i < 0n ? -i : i).toString().length;
}

function roundSignificant(d: Decimal, digits: number): Decimal {
  const n = digitCount(d.mant);
  if (n <= digits) return d;
  const drop = 10n ** BigInt(n - digits);
  let q = d.mant / drop;
  const r = d.mant % drop;
  const twice = 2n * (r < 0n ? -r : r);
  if (twice > drop || (twice === drop && (q & 1n) === 1n)) q += d.mant < 0n ? -1n : 1n;
  return { mant: q, exp: d.exp + n - digits };
}

/**
 * Integer remainder with the sign of the dividend (Go's `%`). Returns a string naming OPA's error
 * (`modulo by zero`, `modulo on floating-point number`) instead of a number when it fails.
 */
export function remainder(a: RegoNumber, b: RegoNumber): RegoNumber | 'modulo by zero' | 'modulo on floating-point number' {
  if (isSmallInt(a) && isSmallInt(b)) {
    if (b === 0) return 'modulo by zero';
    const r = a % b;
    return r === 0 ? 0 : r;
  }
  const x = opaInt(a);
  const y = x === undefined ? undefined : opaInt(b);
  if (x === undefined || y === undefined) return 'modulo on floating-point number';
  if (y === 0n) return 'modulo by zero';
  return fromBigInt(x % y);
}

export function floor(a: RegoNumber): RegoNumber {
  if (typeof a === 'number') return fromJSNumber(Math.floor(a));
  if (a.exp >= 0) return a;
  const d = 10n ** BigInt(-a.exp);
  let q = a.mant / d;
  if (a.mant < 0n && a.mant % d !== 0n) q -= 1n;
  return fromBigInt(q);
}

export function ceil(a: RegoNumber): RegoNumber {
  return negate(floor(negate(a)));
}

/** Rounds half away from zero (OPA's `round`). */
export function round(a: RegoNumber): RegoNumber {
  if (typeof a === 'number') return fromJSNumber(a < 0 ? -Math.round(-a) : Math.round(a));
  if (a.exp >= 0) return a;
  const neg = a.mant < 0n;
  const abs = neg ? -a.mant : a.mant;
  const d = 10n ** BigInt(-a.exp);
  let q = abs / d;
  if (2n * (abs % d) >= d) q += 1n;
  return fromBigInt(neg ? -q : q);
}

export function abs(a: RegoNumber): RegoNumber {
  return sign(a) < 0 ? negate(a) : a;
}
