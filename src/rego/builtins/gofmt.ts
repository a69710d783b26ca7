/**
 * Go's `fmt.Sprintf`, as far as `sprintf` can reach it: OPA hands Go ints, big ints, float64s and
 * strings (everything else as its Rego text). Verbs, flags (`+ - # 0 space`), width, precision,
 * `*` and `[n]` argument indexes, and Go's in-band errors (`%!d(string=x)`, `%!v(MISSING)`,
 * `%!(EXTRA int=1)`).
 */

export type FmtArg =
  | { readonly kind: 'int'; readonly value: bigint }
  | { readonly kind: 'bigint'; readonly value: bigint }
  | { readonly kind: 'float'; readonly value: number }
  | { readonly kind: 'string'; readonly value: string };

interface Flags {
  plus: boolean;
  minus: boolean;
  sharp: boolean;
  space: boolean;
  zero: boolean;
  wid: number;
  widPresent: boolean;
  prec: number;
  precPresent: boolean;
}

const TYPE_NAMES: Record<FmtArg['kind'], string> = {
  int: 'int',
  bigint: '*big.Int',
  float: 'float64',
  string: 'string',
};

export function goSprintf(format: string, args: readonly FmtArg[]): string {
  let out = '';
  let argNum = 0;
  let reordered = false;
  const end = format.length;
  let i = 0;
  while (i < end) {
    const lasti = i;
    while (i < end && format[i] !== '%') i++;
    if (i > lasti) out += format.slice(lasti, i);
    if (i >= end) break;
    i++;
    const f: Flags = {
      plus: false,
      minus: false,
      sharp: false,
      space: false,
      zero: false,
      wid: 0,
      widPresent: false,
      prec: 0,
      precPresent: false,
    };
    flags: for (; i < end; i++) {
      switch (format[i]) {
        case '#':
          f.sharp = true;
          break;
        case '0':
          f.zero = !f.minus;
          break;
        case '+':
          f.plus = true;
          break;
        case '-':
          f.minus = true;
          f.zero = false;
          break;
        case ' ':
          f.space = true;
          break;
        default:
          break flags;
      }
    }
    let goodArgNum = true;
    let afterIndex = false;
    const argNumber = (): void => {
      if (i >= end || format[i] !== '[') return;
      reordered = true;
      const close = format.indexOf(']', i);
      if (close < 0) {
        goodArgNum = false;
        return;
      }
      const text = format.slice(i + 1, close);
      const n = /^\d+$/.test(text) ? Number(text) : NaN;
      if (!Number.isFinite(n) || n < 1 || n > args.length) {
        goodArgNum = false;
        i = close + 1;
        return;
      }
      argNum = n - 1;
      i = close + 1;
      afterIndex = true;
    };
    const parseNum = (): [number, boolean] => {
      const start = i;
      while (i < end && format[i]! >= '0' && format[i]! <= '9') i++;
      return i > start ? [Number(format.slice(start, i)), true] : [0, false];
    };
    const intFromArg = (): [number, boolean] => {
      if (argNum >= args.length) return [0, false];
      const a = args[argNum++]!;
      if (a.kind === 'int' && a.value <= 1_000_000n && a.value >= -1_000_000n) return [Number(a.value), true];
      return [0, false];
    };

    argNumber();
    if (i < end && format[i] === '*') {
      i++;
      [f.wid, f.widPresent] = intFromArg();
      if (!f.widPresent) out += '%!(BADWIDTH)';
      if (f.wid < 0) {
        f.wid = -f.wid;
        f.minus = true;
        f.zero = false;
      }
      afterIndex = false;
    } else {
      [f.wid, f.widPresent] = parseNum();
      if (afterIndex && f.widPresent) goodArgNum = false;
    }
    if (i + 1 <= end && format[i] === '.') {
      i++;
      if (afterIndex) goodArgNum = false;
      argNumber();
      if (i < end && format[i] === '*') {
        i++;
        [f.prec, f.precPresent] = intFromArg();
        if (f.prec < 0) {
          f.prec = 0;
          f.precPresent = false;
        }
        if (!f.precPresent) out += '%!(BADPREC)';
        afterIndex = false;
      } else {
        [f.prec, f.precPresent] = parseNum();
        if (!f.precPresent) {
          f.prec = 0;
          f.precPresent = true;
        }
      }
    }
    if (!afterIndex) argNumber();
    if (i >= end) {
      out += '%!(NOVERB)';
      break;
    }
    const verb = String.fromCodePoint(format.codePointAt(i)!);
    i += verb.length;
    if (verb === '%') {
      out += '%';
      continue;
    }
    if (!goodArgNum) {
      out += `%!${verb}(BADINDEX)`;
      continue;
    }
    if (argNum >= args.length) {
      out += `%!${verb}(MISSING)`;
      continue;
    }
    out += formatArg(args[argNum++]!, verb, f);
  }
  if (!reordered && argNum < args.length) {
    out +=
      '%!(EXTRA ' +
      args
        .slice(argNum)
        .map((a) => `${TYPE_NAMES[a.kind]}=${formatArg(a, 'v', blankFlags())}`)
        .join(', ') +
      ')';
  }
  return out;
}

function blankFlags(): Flags {
  return {
    plus: false,
    minus: false,
    sharp: false,
    space: false,
    zero: false,
    wid: 0,
    widPresent: false,
    prec: 0,
    precPresent: false,
  };
}

function badVerb(a: FmtArg, verb: string): string {
  return `%!${verb}(${TYPE_NAMES[a.kind]}=${formatArg(a, 'v', blankFlags())})`;
}

function formatArg(a: FmtArg, verb: string, f: Flags): string {
  switch (a.kind) {
    case 'int':
    case 'bigint':
      return formatInteger(a, verb, f);
    case 'float':
      return formatFloat(a, verb, f);
    case 'string':
      return formatString(a, verb, f);
  }
}

function runeCount(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

function pad(s: string, f: Flags, zeroAllowed = true): string {
  if (!f.widPresent) return s;
  const n = f.wid - runeCount(s);
  if (n <= 0) return s;
  if (f.minus) return s + ' '.repeat(n);
  return (f.zero && zeroAllowed ? '0' : ' ').repeat(n) + s;
}

function formatInteger(a: FmtArg & { value: bigint }, verb: string, f: Flags): string {
  let base: number;
  switch (verb) {
    case 'v':
    case 'd':
      base = 10;
      break;
    case 'b':
      base = 2;
      break;
    case 'o':
    case 'O':
      base = 8;
      break;
    case 'x':
    case 'X':
      base = 16;
      break;
    case 'c':
      if (a.kind === 'int') return pad(String.fromCodePoint(validRune(a.value)), f);
      return badVerb(a, verb);
    case 'q':
      if (a.kind === 'int') return pad(quoteRune(validRune(a.value)), f);
      return badVerb(a, verb);
    case 'U': {
      if (a.kind !== 'int') return badVerb(a, verb);
      const hex = (a.value < 0n ? -a.value : a.value).toString(16).toUpperCase().padStart(4, '0');
      let s = `U+${hex}`;
      if (f.sharp && a.value >= 0n && a.value <= 0x10ffffn) s += ` '${String.fromCodePoint(Number(a.value))}'`;
      return pad(s, f, false);
    }
    case 'e':
    case 'E':
    case 'f':
    case 'F':
    case 'g':
    case 'G':
      if (a.kind === 'bigint') return badVerb(a, verb);
      return badVerb(a, verb);
    case 's':
      if (a.kind === 'bigint') return pad(a.value.toString(), f);
      return badVerb(a, verb);
    default:
      return badVerb(a, verb);
  }
  const negative = a.value < 0n;
  let digits = (negative ? -a.value : a.value).toString(base);
  if (verb === 'X') digits = digits.toUpperCase();
  let prec = 0;
  if (f.precPresent) {
    prec = f.prec;
    if (prec === 0 && a.value === 0n) return f.widPresent ? ' '.repeat(f.wid) : '';
  } else if (f.zero && !f.minus && f.widPresent) {
    prec = f.wid;
    if (negative || f.plus || f.space) prec--;
  }
  if (digits.length < prec) digits = '0'.repeat(prec - digits.length) + digits;
  if (f.sharp) {
    if (base === 2) digits = '0b' + digits;
    else if (base === 8 && digits[0] !== '0') digits = '0' + digits;
    else if (base === 16) digits = (verb === 'X' ? '0X' : '0x') + digits;
  }
  if (verb === 'O') digits = '0o' + digits;
  if (negative) digits = '-' + digits;
  else if (f.plus) digits = '+' + digits;
  else if (f.space) digits = ' ' + digits;
  return pad(digits, f, false);
}

function validRune(v: bigint): number {
  return v >= 0n && v <= 0x10ffffn && !(v >= 0xd800n && v <= 0xdfffn) ? Number(v) : 0xfffd;
}

function quoteRune(c: number): string {
  const ch = String.fromCodePoint(c);
  if (ch === "'") return "'\\''";
  const q = JSON.stringify(ch);
  return "'" + q.slice(1, -1).replace(/\\"/g, '"') + "'";
}

function formatString(a: { kind: 'string'; value: string }, verb: string, f: Flags): string {
  let s = a.value;
  switch (verb) {
    case 'v':
    case 's':
      if (f.precPresent) s = Array.from(s).slice(0, f.prec).join('');
      return pad(s, f);
    case 'q':
      return pad(JSON.stringify(s), f);
    case 'x':
    case 'X': {
      let bytes = [...Buffer.from(s, 'utf8')];
      if (f.precPresent) bytes = bytes.slice(0, f.prec);
      let hex = bytes.map((b) => b.toString(16).padStart(2, '0'));
      if (verb === 'X') hex = hex.map((h) => h.toUpperCase());
      const prefix = f.sharp ? (verb === 'X' ? '0X' : '0x') : '';
      const joined = f.space ? hex.map((h) => prefix + h).join(' ') : prefix + hex.join('');
      return pad(joined, f);
    }
    default:
      return badVerb(a, verb);
  }
}

// ---- floats ------------------------------------------------------------------------------------

/** Decimal digits `d` with the decimal point after `dp` digits (Go's strconv decimal). */
interface Digits {
  d: string;
  dp: number;
}

/** The exact decimal expansion of a finite double's magnitude. */
function exactDigits(x: number): Digits {
  if (x === 0) return { d: '', dp: 0 };
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(x));
  const bits = view.getBigUint64(0);
  const expBits = Number((bits >> 52n) & 0x7ffn);
  let mant = bits & ((1n << 52n) - 1n);
  let e: number;
  if (expBits === 0) e = -1074;
  else {
    mant |= 1n << 52n;
    e = expBits - 1075;
  }
  if (e >= 0) {
    const d = (mant << BigInt(e)).toString();
    return trimDigits({ d, dp: d.length });
  }
  const d = (mant * 5n ** BigInt(-e)).toString();
  return trimDigits({ d, dp: d.length + e });
}

/** Shortest round-trip digits (what JS and Go both print by default). */
function shortestDigits(x: number): Digits {
  if (x === 0) return { d: '', dp: 0 };
  const [mant, exp] = Math.abs(x).toExponential().split('e') as [string, string];
  const d = mant.replace('.', '');
  return trimDigits({ d, dp: Number(exp) + 1 });
}

function trimDigits(g: Digits): Digits {
  let d = g.d.replace(/0+$/, '');
  let dp = g.dp;
  const lead = d.length - d.replace(/^0+/, '').length;
  d = d.slice(lead);
  dp -= lead;
  return d === '' ? { d: '', dp: 0 } : { d, dp };
}

/** Rounds to `nd` significant digits, half to even on the exact expansion (Go's decimal.Round). */
function roundDigits(g: Digits, nd: number): Digits {
  if (nd >= g.d.length) return g;
  if (nd < 0) return { d: '', dp: 0 };
  const rest = g.d.slice(nd);
  const halfway = /^50*$/.test(rest);
  const up = halfway ? nd > 0 && (Number(g.d[nd - 1]) & 1) === 1 : rest[0]! >= '5';
  if (!up) return trimDigits({ d: g.d.slice(0, nd), dp: g.dp });
  const digits = g.d.slice(0, nd).split('');
  let j = digits.length - 1;
  while (j >= 0 && digits[j] === '9') j--;
  if (j < 0) return { d: '1', dp: g.dp + 1 };
  digits[j] = String(Number(digits[j]) + 1);
  return trimDigits({ d: digits.slice(0, j + 1).join(''), dp: g.dp });
}

function digitAt(g: Digits, i: number): string {
  return i >= 0 && i < g.d.length ? g.d[i]! : '0';
}

function fmtE(g: Digits, prec: number, upper: boolean): string {
  let s = g.d.length ? g.d[0]! : '0';
  if (prec > 0) {
    s += '.';
    for (let i = 1; i <= prec; i++) s += digitAt(g, i);
  }
  const exp = g.d.length === 0 ? 0 : g.dp - 1;
  const sign = exp < 0 ? '-' : '+';
  const abs = Math.abs(exp);
  return s + (upper ? 'E' : 'e') + sign + (abs < 10 ? '0' + abs : String(abs));
}

function fmtF(g: Digits, prec: number): string {
  let s = '';
  if (g.dp > 0) for (let i = 0; i < g.dp; i++) s += digitAt(g, i);
  else s = '0';
  if (prec > 0) {
    s += '.';
    for (let i = 0; i < prec; i++) s += digitAt(g, g.dp + i);
  }
  return s;
}

/** Go's strconv.FormatFloat for 'e', 'f', 'g' with precision (-1 = shortest). */
export function goFormatFloat(x: number, fmt: 'e' | 'E' | 'f' | 'g' | 'G', prec: number): string {
  const neg = x < 0 || Object.is(x, -0);
  const shortest = prec < 0;
  let g: Digits;
  if (shortest) {
    g = shortestDigits(x);
    if (fmt === 'e' || fmt === 'E') prec = Math.max(g.d.length - 1, 0);
    else if (fmt === 'f') prec = Math.max(g.d.length - g.dp, 0);
    else prec = g.d.length;
  } else {
    const exact = exactDigits(x);
    if (fmt === 'e' || fmt === 'E') g = roundDigits(exact, 1 + prec);
    else if (fmt === 'f') g = roundDigits(exact, exact.dp + prec);
    else {
      if (prec === 0) prec = 1;
      g = roundDigits(exact, prec);
    }
  }
  let body: string;
  if (fmt === 'e' || fmt === 'E') body = fmtE(g, prec, fmt === 'E');
  else if (fmt === 'f') body = fmtF(g, prec);
  else {
    let eprec = prec;
    if (eprec > g.d.length && g.d.length >= g.dp) eprec = g.d.length;
    if (shortest) eprec = 6;
    const exp = g.dp - 1;
    if (g.d.length !== 0 && (exp < -4 || exp >= eprec)) {
      body = fmtE(g, Math.min(prec, g.d.length) - 1, fmt === 'G');
    } else {
      body = fmtF(g, Math.max((prec > g.dp ? g.d.length : prec) - g.dp, 0));
    }
  }
  return (neg ? '-' : '') + body;
}

function formatFloat(a: { kind: 'float'; value: number }, verb: string, f: Flags): string {
  let num: string;
  const x = a.value;
  switch (verb) {
    case 'v':
      num = goFormatFloat(x, 'g', f.precPresent ? f.prec : -1);
      break;
    case 'g':
    case 'G':
      num = goFormatFloat(x, verb, f.precPresent ? f.prec : -1);
      break;
    case 'e':
    case 'E':
      num = goFormatFloat(x, verb, f.precPresent ? f.prec : 6);
      break;
    case 'f':
    case 'F':
      num = goFormatFloat(x, 'f', f.precPresent ? f.prec : 6);
      break;
    default:
      return badVerb(a, verb);
  }
  if (f.sharp) {
    // %#g keeps trailing zeros and the decimal point; rarely used, only the point is ensured
    if (!num.includes('.') && !/[eE]/.test(num)) num += '.';
  }
  let sign = '';
  if (num.startsWith('-')) {
    sign = '-';
    num = num.slice(1);
  } else if (f.plus) sign = '+';
  else if (f.space) sign = ' ';
  if (f.zero && !f.minus && f.widPresent && f.wid > num.length + sign.length) {
    return sign + '0'.repeat(f.wid - num.length - sign.length) + num;
  }
  return pad(sign + num, f, false);
}
