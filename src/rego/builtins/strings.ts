import { RegoObject, RegoSet, compare, num, toRegoText, typeName, type Value } from '../value/index.js';
import { BuiltinError, OperandTypeError, defineBuiltins } from './registry.js';
import { goSprintf, type FmtArg } from './gofmt.js';
import { arr, intOperand, runeLength, runes, str, stringElements } from './operands.js';
import { T, anyArray, anySet, stringCollection } from './types.js';

const ASCII = /^[\x00-\x7f]*$/;
const GO_SPACE = '\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const LEADING_SPACE = new RegExp(`^[${GO_SPACE}]+`);
const TRAILING_SPACE = new RegExp(`[${GO_SPACE}]+$`);

/** Go's unicode case mapping: one rune to one rune, no special casing (ß stays ß). */
function mapCase(s: string, upper: boolean): string {
  if (ASCII.test(s)) return upper ? s.toUpperCase() : s.toLowerCase();
  let out = '';
  for (const ch of s) {
    const m = upper ? ch.toUpperCase() : ch.toLowerCase();
    out += [...m].length === 1 ? m : ch;
  }
  return out;
}

function trimLeftSet(s: string, cutset: string): string {
  if (cutset === '') return s;
  const cut = new Set(runes(cutset));
  const rs = runes(s);
  let i = 0;
  while (i < rs.length && cut.has(rs[i]!)) i++;
  return rs.slice(i).join('');
}

function trimRightSet(s: string, cutset: string): string {
  if (cutset === '') return s;
  const cut = new Set(runes(cutset));
  const rs = runes(s);
  let j = rs.length;
  while (j > 0 && cut.has(rs[j - 1]!)) j--;
  return rs.slice(0, j).join('');
}

/** Rune index of `search` in `base`, or -1. */
function runeIndexOf(base: string, search: string, from = 0): number {
  const i = base.indexOf(search, from);
  if (i < 0 || ASCII.test(base)) return i;
  return runeLength(base.slice(0, i));
}

/** Go's strings.Replacer: at each position the first matching pair (in order) wins. */
function replaceAll(s: string, pairs: readonly (readonly [string, string])[]): string {
  if (pairs.length === 1 && pairs[0]![0] !== '') return s.split(pairs[0]![0]).join(pairs[0]![1]);
  let out = '';
  let i = 0;
  let prevEmpty = false;
  while (i <= s.length) {
    const hit = pairs.find(([old]) => (old === '' ? !prevEmpty : s.startsWith(old, i)));
    prevEmpty = hit !== undefined && hit[0] === '';
    if (hit) {
      out += hit[1];
      i += hit[0].length;
      continue;
    }
    if (i >= s.length) break;
    const ch = String.fromCodePoint(s.codePointAt(i)!);
    out += ch;
    i += ch.length;
  }
  return out;
}

function stringsOf(v: Value, position: number): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v) || v instanceof RegoSet) return stringElements(v, position);
  throw new OperandTypeError(position, ['string', 'set', 'array'], v);
}

/** sprintf's view of a value: Go int, big.Int, float64 or string, as OPA converts them. */
function fmtArg(v: Value): FmtArg {
  if (typeof v === 'string') return { kind: 'string', value: v };
  if (num.isNumber(v)) {
    const i = num.toBigInt(v);
    if (i !== undefined) {
      const inInt64 = i >= -(2n ** 63n) && i < 2n ** 63n;
      return { kind: inInt64 ? 'int' : 'bigint', value: i };
    }
    return { kind: 'float', value: num.toFloat(v) };
  }
  return { kind: 'string', value: toRegoText(v) };
}

/** What `print` and template strings show for one operand value. */
function printText(v: Value): string {
  return typeof v === 'string' ? v : toRegoText(v);
}

/**
 * The cross product of print/template operands: each operand is a scalar (shown as is) or a set of
 * the values its expression produced (empty = `<undefined>`).
 */
function crossProduct(operands: readonly Value[], emit: (parts: string[]) => void): void {
  const parts: string[] = new Array(operands.length);
  const walk = (i: number): void => {
    if (i >= operands.length) {
      emit(parts);
      return;
    }
    const x = operands[i]!;
    if (!(x instanceof RegoSet)) {
      if (typeof x === 'object' && x !== null && !num.isNumber(x))
        throw new BuiltinError(`illegal argument type: ${typeName(x)}`);
      parts[i] = printText(x);
      walk(i + 1);
      return;
    }
    if (x.size === 0) {
      parts[i] = '<undefined>';
      walk(i + 1);
      return;
    }
    for (const m of x.values()) {
      parts[i] = printText(m);
      walk(i + 1);
    }
  };
  walk(0);
}

export const strings = defineBuiltins(
  {
    name: 'concat',
    decl: T.fn([T.string, stringCollection], T.string),
    impl: ([sep, v]) => stringElements(v!, 2).join(str(sep!)),
  },
  {
    name: 'format_int',
    decl: T.fn([T.number, T.number], T.string),
    impl: ([n, b]) => {
      const base = b === 2 || b === 8 || b === 10 || b === 16 ? b : undefined;
      if (base === undefined) throw new OperandTypeError('operand 2 must be one of {2, 8, 10, 16}');
      const i = num.toBigInt(num.isInteger(n as num.RegoNumber) ? (n as num.RegoNumber) : truncate(n as num.RegoNumber))!;
      return i.toString(base);
    },
  },
  {
    name: 'indexof',
    decl: T.fn([T.string, T.string], T.number),
    impl: ([s, search]) => {
      if (str(search!) === '') throw new BuiltinError('empty search character');
      return runeIndexOf(str(s!), str(search!));
    },
  },
  {
    name: 'indexof_n',
    decl: T.fn([T.string, T.string], T.arrayOf(T.number)),
    impl: ([s, search]) => {
      const base = runes(str(s!));
      const needle = runes(str(search!));
      if (needle.length === 0) throw new BuiltinError('empty search character');
      const out: Value[] = [];
      for (let i = 0; i + needle.length <= base.length; i++) {
        let ok = true;
        for (let j = 0; j < needle.length && ok; j++) ok = base[i + j] === needle[j];
        if (ok) out.push(i);
      }
      return out;
    },
  },
  {
    name: 'substring',
    decl: T.fn([T.string, T.number, T.number], T.string),
    impl: ([s, start, length]) => {
      const from = intOperand(start!, 2);
      const len = intOperand(length!, 3);
      if (from < 0) throw new BuiltinError('negative offset');
      const base = str(s!);
      if (ASCII.test(base)) return len < 0 ? base.slice(from) : base.slice(from, from + len);
      const rs = runes(base);
      return (len < 0 ? rs.slice(from) : rs.slice(from, from + len)).join('');
    },
  },
  { name: 'contains', decl: T.fn([T.string, T.string], T.boolean), impl: ([s, x]) => str(s!).includes(str(x!)) },
  {
    name: 'strings.count',
    decl: T.fn([T.string, T.string], T.number),
    impl: ([s, x]) => {
      const sub = str(x!);
      if (sub === '') return runeLength(str(s!)) + 1;
      return str(s!).split(sub).length - 1;
    },
  },
  { name: 'startswith', decl: T.fn([T.string, T.string], T.boolean), impl: ([s, x]) => str(s!).startsWith(str(x!)) },
  { name: 'endswith', decl: T.fn([T.string, T.string], T.boolean), impl: ([s, x]) => str(s!).endsWith(str(x!)) },
  { name: 'lower', decl: T.fn([T.string], T.string), impl: ([s]) => mapCase(str(s!), false) },
  { name: 'upper', decl: T.fn([T.string], T.string), impl: ([s]) => mapCase(str(s!), true) },
  {
    name: 'split',
    decl: T.fn([T.string, T.string], T.arrayOf(T.string)),
    impl: ([s, d]) => (str(d!) === '' ? runes(str(s!)) : str(s!).split(str(d!))),
  },
  {
    name: 'replace',
    decl: T.fn([T.string, T.string, T.string], T.string),
    impl: ([s, old, rep]) => replaceAll(str(s!), [[str(old!), str(rep!)]]),
  },
  {
    name: 'strings.replace_n',
    decl: T.fn([T.objectOf(T.string, T.string), T.string], T.string),
    impl: ([patterns, s]) => {
      const pairs: [string, string][] = [];
      const entries = [...(patterns as RegoObject).entries()].sort((a, b) => compare(a[0], b[0]));
      for (const [k, v] of entries) {
        if (typeof k !== 'string') throw new OperandTypeError('operand 1 non-string key found in pattern object');
        if (typeof v !== 'string') throw new OperandTypeError('operand 1 non-string value found in pattern object');
        pairs.push([k, v]);
      }
      if (pairs.length === 0) return s!;
      return replaceAll(str(s!), pairs);
    },
  },
  {
    name: 'trim',
    decl: T.fn([T.string, T.string], T.string),
    impl: ([s, c]) => trimRightSet(trimLeftSet(str(s!), str(c!)), str(c!)),
  },
  { name: 'trim_left', decl: T.fn([T.string, T.string], T.string), impl: ([s, c]) => trimLeftSet(str(s!), str(c!)) },
  { name: 'trim_right', decl: T.fn([T.string, T.string], T.string), impl: ([s, c]) => trimRightSet(str(s!), str(c!)) },
  {
    name: 'trim_prefix',
    decl: T.fn([T.string, T.string], T.string),
    impl: ([s, p]) => (str(s!).startsWith(str(p!)) ? str(s!).slice(str(p!).length) : s!),
  },
  {
    name: 'trim_suffix',
    decl: T.fn([T.string, T.string], T.string),
    impl: ([s, p]) =>
      str(p!) !== '' && str(s!).endsWith(str(p!)) ? str(s!).slice(0, str(s!).length - str(p!).length) : s!,
  },
  {
    name: 'trim_space',
    decl: T.fn([T.string], T.string),
    impl: ([s]) => str(s!).replace(LEADING_SPACE, '').replace(TRAILING_SPACE, ''),
  },
  {
    name: 'sprintf',
    decl: T.fn([T.string, anyArray], T.string),
    impl: ([format, values]) => goSprintf(str(format!), arr(values!).map(fmtArg)),
  },
  {
    name: 'strings.reverse',
    decl: T.fn([T.string], T.string),
    impl: ([s]) => runes(str(s!)).reverse().join(''),
  },
  {
    name: 'strings.any_prefix_match',
    decl: T.fn([T.union(T.string, anySet, anyArray), T.union(T.string, anySet, anyArray)], T.boolean),
    impl: ([a, b]) => {
      const subjects = stringsOf(a!, 1);
      const prefixes = stringsOf(b!, 2);
      return subjects.some((s) => prefixes.some((p) => s.startsWith(p)));
    },
  },
  {
    name: 'strings.any_suffix_match',
    decl: T.fn([T.union(T.string, anySet, anyArray), T.union(T.string, anySet, anyArray)], T.boolean),
    impl: ([a, b]) => {
      const subjects = stringsOf(a!, 1);
      const suffixes = stringsOf(b!, 2);
      return subjects.some((s) => suffixes.some((p) => s.endsWith(p)));
    },
  },
  {
    name: 'internal.template_string',
    decl: T.fn([anyArray], T.string),
    impl: ([parts]) => {
      let result: string | undefined;
      crossProduct(arr(parts!), (p) => {
        if (result !== undefined) throw new TemplateConflictError();
        result = p.join('');
      });
      return result ?? '';
    },
  },
  {
    name: 'internal.print',
    decl: T.fn([T.arrayOf(anySet)], undefined),
    impl: ([operands], ctx) => {
      crossProduct(arr(operands!), (p) => ctx.print(p.join(' ')));
      return true;
    },
  },
  {
    name: 'print',
    decl: T.fn([], undefined, T.any),
    impl: (args, ctx) => {
      ctx.print(args.map(printText).join(' '));
      return true;
    },
  },
);

/** A template string whose expressions produced more than one value (OPA: a conflict error). */
export class TemplateConflictError extends BuiltinError {
  override readonly code: string = 'eval_conflict_error';
  override readonly fatal: boolean = true;
  constructor() {
    super('template-strings must not produce multiple outputs');
    this.name = 'TemplateConflictError';
  }
  /** OPA reports this conflict without the builtin's name. */
  override attach(): this {
    return this;
  }
}

function truncate(n: num.RegoNumber): num.RegoNumber {
  return num.sign(n) < 0 ? num.ceil(n) : num.floor(n);
}

