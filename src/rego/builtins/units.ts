import { num } from '../value/index.js';
import { BuiltinError, defineBuiltins } from './registry.js';
import { str } from './operands.js';
import { T } from './types.js';

/** Splits `10.5Gi` into number text and unit text as OPA does (scientific notation allowed). */
function splitAmount(s: string, fail: (msg: string) => never): [string, string] {
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    const numeric = (c >= '0' && c <= '9') || c === '.';
    if (!numeric && c !== 'e' && c !== 'E' && c !== '+' && c !== '-') return i === 0 ? ['', s] : [s.slice(0, i), s.slice(i)];
    if (c === 'e' || c === 'E') {
      const next = s[i + 1];
      if (next === undefined || !((next >= '0' && next <= '9') || next === '+' || next === '-'))
        return i === 0 ? ['', s] : [s.slice(0, i), s.slice(i)];
      if (next === '+' || next === '-') i++;
      const exp = /^\d*/.exec(s.slice(i + 1))![0];
      if (exp.length > 6) fail('exponent too large');
    }
  }
  return [s, ''];
}

const SI: Record<string, bigint> = {
  '': 1n,
  k: 1000n,
  K: 1000n,
  M: 10n ** 6n,
  g: 10n ** 9n,
  G: 10n ** 9n,
  t: 10n ** 12n,
  T: 10n ** 12n,
  p: 10n ** 15n,
  P: 10n ** 15n,
  e: 10n ** 18n,
  E: 10n ** 18n,
  ki: 1n << 10n,
  Ki: 1n << 10n,
  mi: 1n << 20n,
  Mi: 1n << 20n,
  gi: 1n << 30n,
  Gi: 1n << 30n,
  ti: 1n << 40n,
  Ti: 1n << 40n,
  pi: 1n << 50n,
  Pi: 1n << 50n,
  ei: 1n << 60n,
  Ei: 1n << 60n,
};

const BYTES: Record<string, bigint> = {
  '': 1n,
  kb: 1000n,
  k: 1000n,
  kib: 1n << 10n,
  ki: 1n << 10n,
  mb: 10n ** 6n,
  m: 10n ** 6n,
  mib: 1n << 20n,
  mi: 1n << 20n,
  gb: 10n ** 9n,
  g: 10n ** 9n,
  gib: 1n << 30n,
  gi: 1n << 30n,
  tb: 10n ** 12n,
  t: 10n ** 12n,
  tib: 1n << 40n,
  ti: 1n << 40n,
  pb: 10n ** 15n,
  p: 10n ** 15n,
  pib: 1n << 50n,
  pi: 1n << 50n,
  eb: 10n ** 18n,
  e: 10n ** 18n,
  eib: 1n << 60n,
  ei: 1n << 60n,
};

/** Exact decimal of the amount text (Go's big.Rat / big.Float SetString syntax). */
function amount(text: string): num.Decimal | undefined {
  const n = num.parseNumberLoose(text);
  return n === undefined ? undefined : num.toDecimal(n);
}

/** Rounds a decimal to 10 fractional digits, as Go's Rat.FloatString(10) (half away from zero). */
function fixed10(d: num.Decimal): num.RegoNumber {
  if (d.exp >= -10) return num.fromDecimal(d);
  const drop = 10n ** BigInt(-10 - d.exp);
  const neg = d.mant < 0n;
  const abs = neg ? -d.mant : d.mant;
  let q = abs / drop;
  if (2n * (abs % drop) >= drop) q += 1n;
  return num.fromDecimal({ mant: neg ? -q : q, exp: -10 });
}

export const units = defineBuiltins(
  {
    name: 'units.parse',
    decl: T.fn([T.string], T.number),
    impl: ([x]) => {
      const fail = (msg: string): never => {
        throw new BuiltinError(`units.parse: ${msg}`);
      };
      const s = str(x!).replaceAll('"', '');
      if (s.includes(' ')) fail('spaces not allowed in resource strings');
      const [numText, unitText] = splitAmount(s, fail);
      if (numText === '') fail('no amount provided');
      const unit = unitText.length > 1 ? unitText[0] + unitText.slice(1).toLowerCase() : unitText;
      const d = amount(numText);
      if (unit === 'm') {
        if (!d) return fail('could not parse amount to a number');
        return fixed10({ mant: d.mant, exp: d.exp - 3 });
      }
      const factor = SI[unit];
      if (factor === undefined) fail(`unit ${unit} not recognized`);
      if (!d) return fail('could not parse amount to a number');
      return fixed10({ mant: d.mant * factor!, exp: d.exp });
    },
  },
  {
    name: 'units.parse_bytes',
    decl: T.fn([T.string], T.number),
    impl: ([x]) => {
      const fail = (msg: string): never => {
        throw new BuiltinError(`units.parse_bytes: ${msg}`);
      };
      const s = str(x!).toLowerCase().replaceAll('"', '');
      if (s.includes(' ')) fail('spaces not allowed in resource strings');
      const [numText, unit] = splitAmount(s, fail);
      if (numText === '') fail('no byte amount provided');
      const factor = BYTES[unit];
      if (factor === undefined) fail(`byte unit ${unit} not recognized`);
      const d = amount(numText);
      if (!d) return fail('could not parse byte amount to a number');
      const total = { mant: d.mant * factor!, exp: d.exp };
      return num.fromBigInt(total.exp >= 0 ? total.mant * 10n ** BigInt(total.exp) : total.mant / 10n ** BigInt(-total.exp));
    },
  },
);
