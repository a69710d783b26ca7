/**
 * Go's time layouts (reference time `Mon Jan 2 15:04:05 MST 2006`), durations and zone handling,
 * enough for OPA's time builtins. Instants are bigint nanoseconds since the Unix epoch; zones are
 * IANA names resolved with Intl (Go's tzdata equivalent).
 */

export class TimeError extends Error {}

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

export const NAMED_LAYOUTS: Record<string, string> = {
  ANSIC: 'Mon Jan _2 15:04:05 2006',
  UnixDate: 'Mon Jan _2 15:04:05 MST 2006',
  RubyDate: 'Mon Jan 02 15:04:05 -0700 2006',
  RFC822: '02 Jan 06 15:04 MST',
  RFC822Z: '02 Jan 06 15:04 -0700',
  RFC850: 'Monday, 02-Jan-06 15:04:05 MST',
  RFC1123: 'Mon, 02 Jan 2006 15:04:05 MST',
  RFC1123Z: 'Mon, 02 Jan 2006 15:04:05 -0700',
  RFC3339: '2006-01-02T15:04:05Z07:00',
  RFC3339Nano: '2006-01-02T15:04:05.999999999Z07:00',
};

// ---- zones ----------------------------------------------------------------------------------------

export interface Zone {
  readonly name: string;
  /** Offset east of UTC in seconds at the given instant (ms), and the zone abbreviation. */
  at(ms: number): { offset: number; abbr: string };
}

export const UTC: Zone = { name: 'UTC', at: () => ({ offset: 0, abbr: 'UTC' }) };

const zoneCache = new Map<string, Zone>();

function ianaZone(name: string): Zone {
  let fmt: Intl.DateTimeFormat;
  let abbrFmts: Intl.DateTimeFormat[];
  try {
    fmt = new Intl.DateTimeFormat('en-US', {
      timeZone: name,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      era: 'short',
    });
    abbrFmts = ['en-US', 'en-GB', 'en-IN', 'en-AU'].map(
      (locale) => new Intl.DateTimeFormat(locale, { timeZone: name, timeZoneName: 'short' }),
    );
  } catch {
    throw new TimeError(`unknown time zone ${name}`);
  }
  return {
    name,
    at(ms: number) {
      const parts = Object.fromEntries(fmt.formatToParts(new Date(ms)).map((p) => [p.type, p.value]));
      let year = Number(parts.year);
      if (parts.era === 'BC' || parts.era === 'B') year = 1 - year;
      const wall = utcMillis(year, Number(parts.month), Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
      const offset = Math.round((wall - Math.floor(ms / 1000) * 1000) / 1000);
      return { offset, abbr: abbreviation(abbrFmts, ms, offset) };
    },
  };
}

/**
 * The zone's abbreviation (CET, EST, IST…) as the first English locale that knows one spells it;
 * zones without one are named by their offset, as Go's tzdata does (`+03`).
 */
function abbreviation(formats: readonly Intl.DateTimeFormat[], ms: number, offset: number): string {
  for (const f of formats) {
    const part = f.formatToParts(new Date(ms)).find((p) => p.type === 'timeZoneName')?.value;
    if (part && /^[A-Z]{2,5}$/.test(part) && part !== 'GMT' && part !== 'UTC') return part;
    if ((part === 'GMT' || part === 'UTC') && offset === 0) return part;
  }
  return formatNumericAbbr(offset);
}

/** Go names zones without an abbreviation by their offset, e.g. `+03` or `-0930`. */
function formatNumericAbbr(offset: number): string {
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  const h = Math.floor(abs / 3600);
  const m = Math.floor((abs % 3600) / 60);
  return sign + String(h).padStart(2, '0') + (m ? String(m).padStart(2, '0') : '');
}

/** `""`/`UTC` → UTC, `Local` → the process zone, otherwise an IANA name. */
export function loadZone(name: string): Zone {
  if (name === '' || name === 'UTC') return UTC;
  const iana = name === 'Local' ? (process.env.TZ ?? Intl.DateTimeFormat().resolvedOptions().timeZone) : name;
  if (iana === 'UTC' || iana === '') return UTC;
  let z = zoneCache.get(iana);
  if (!z) {
    z = ianaZone(iana);
    zoneCache.set(iana, z);
  }
  return z;
}

export function fixedZone(offset: number, abbr: string): Zone {
  return { name: abbr, at: () => ({ offset, abbr }) };
}

/** UTC milliseconds of a civil time, fields normalised as Go's time.Date does (years 0-99 too). */
function utcMillis(year: number, month: number, day: number, hour: number, minute: number, second: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  return d.getTime();
}

// ---- civil time -------------------------------------------------------------------------------------

export interface Civil {
  year: number;
  month: number; // 1-12
  day: number;
  hour: number;
  minute: number;
  second: number;
  nanos: number;
  weekday: number; // 0 = Sunday
  yday: number; // 1-366
  offset: number;
  abbr: string;
}

const NS_PER_SEC = 1_000_000_000n;

export function civil(ns: bigint, zone: Zone): Civil {
  let secs = ns / NS_PER_SEC;
  let nanos = ns % NS_PER_SEC;
  if (nanos < 0n) {
    nanos += NS_PER_SEC;
    secs -= 1n;
  }
  const ms = Number(secs) * 1000;
  const { offset, abbr } = zone.at(ms);
  const d = new Date(ms + offset * 1000);
  const year = d.getUTCFullYear();
  const start = utcMillis(year, 1, 1, 0, 0, 0);
  const dayMs = utcMillis(year, d.getUTCMonth() + 1, d.getUTCDate(), 0, 0, 0);
  return {
    year,
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
    nanos: Number(nanos),
    weekday: d.getUTCDay(),
    yday: Math.round((dayMs - start) / 86_400_000) + 1,
    offset,
    abbr,
  };
}

/** Go's time.Date normalisation: any overflowing field carries into the next (in the zone). */
export function fromCivil(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  nanos: number,
  zone: Zone,
): bigint {
  const wall = utcMillis(year, month, day, hour, minute, second);
  // Resolve the zone offset at this wall time (two passes handle DST edges like Go does).
  let offset = zone.at(wall).offset;
  offset = zone.at(wall - offset * 1000).offset;
  return BigInt(wall - offset * 1000) * 1_000_000n + BigInt(nanos);
}

export function weekdayName(d: number): string {
  return DAYS[d]!;
}

// ---- layouts ----------------------------------------------------------------------------------------

/** Literal text, or a layout element (`frac0`/`frac9` carry their digit count and separator). */
type Chunk = { lit: string } | { std: string; digits?: number; sep?: string };

const STD_TOKENS = [
  'January',
  'Jan',
  'Monday',
  'Mon',
  'MST',
  '2006',
  '-07:00:00',
  '-070000',
  '-07:00',
  '-0700',
  '-07',
  'Z07:00:00',
  'Z070000',
  'Z07:00',
  'Z0700',
  'Z07',
  '002',
  '__2',
  '_2',
  '01',
  '02',
  '03',
  '04',
  '05',
  '06',
  '15',
  'PM',
  'pm',
  '1',
  '2',
  '3',
  '4',
  '5',
];

function parseLayout(layout: string): Chunk[] {
  const out: Chunk[] = [];
  let lit = '';
  const flush = (): void => {
    if (lit) out.push({ lit });
    lit = '';
  };
  let i = 0;
  outer: while (i < layout.length) {
    // fractional seconds: .000 / ,000 (fixed) or .999 / ,999 (trimmed), after a seconds field
    const frac = /^[.,](0+|9+)(?![0-9])/.exec(layout.slice(i));
    if (frac) {
      flush();
      out.push({ std: frac[1]![0] === '0' ? 'frac0' : 'frac9', digits: frac[1]!.length, sep: layout[i]! });
      i += frac[0].length;
      continue;
    }
    for (const tok of STD_TOKENS) {
      if (layout.startsWith(tok, i)) {
        if (tok === 'Jan' && layout.startsWith('January', i)) continue;
        if (tok === 'Mon' && layout.startsWith('Monday', i)) continue;
        flush();
        out.push({ std: tok });
        i += tok.length;
        continue outer;
      }
    }
    lit += layout[i];
    i++;
  }
  flush();
  return out;
}

const pad = (n: number, w: number) => String(Math.abs(n)).padStart(w, '0');

function formatOffset(offset: number, std: string): string {
  if (std.startsWith('Z') && offset === 0) return 'Z';
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  const h = pad(Math.floor(abs / 3600), 2);
  const m = pad(Math.floor((abs % 3600) / 60), 2);
  const s = pad(abs % 60, 2);
  const kind = std.replace(/^Z/, '-');
  switch (kind) {
    case '-07':
      return sign + h;
    case '-0700':
      return sign + h + m;
    case '-07:00':
      return sign + h + ':' + m;
    case '-070000':
      return sign + h + m + s;
    default:
      return sign + h + ':' + m + ':' + s;
  }
}

export function formatTime(ns: bigint, zone: Zone, layout: string): string {
  const c = civil(ns, zone);
  let out = '';
  for (const chunk of parseLayout(layout)) {
    if ('lit' in chunk) {
      out += chunk.lit;
      continue;
    }
    switch (chunk.std) {
      case 'January':
        out += MONTHS[c.month - 1];
        break;
      case 'Jan':
        out += MONTHS[c.month - 1]!.slice(0, 3);
        break;
      case '1':
        out += c.month;
        break;
      case '01':
        out += pad(c.month, 2);
        break;
      case 'Monday':
        out += DAYS[c.weekday];
        break;
      case 'Mon':
        out += DAYS[c.weekday]!.slice(0, 3);
        break;
      case '2':
        out += c.day;
        break;
      case '_2':
        out += String(c.day).padStart(2, ' ');
        break;
      case '02':
        out += pad(c.day, 2);
        break;
      case '__2':
        out += String(c.yday).padStart(3, ' ');
        break;
      case '002':
        out += pad(c.yday, 3);
        break;
      case '15':
        out += pad(c.hour, 2);
        break;
      case '3':
        out += c.hour % 12 === 0 ? 12 : c.hour % 12;
        break;
      case '03':
        out += pad(c.hour % 12 === 0 ? 12 : c.hour % 12, 2);
        break;
      case '4':
        out += c.minute;
        break;
      case '04':
        out += pad(c.minute, 2);
        break;
      case '5':
        out += c.second;
        break;
      case '05':
        out += pad(c.second, 2);
        break;
      case '2006':
        out += c.year < 0 ? '-' + pad(c.year, 4) : pad(c.year, 4);
        break;
      case '06':
        out += pad(c.year % 100, 2);
        break;
      case 'PM':
        out += c.hour >= 12 ? 'PM' : 'AM';
        break;
      case 'pm':
        out += c.hour >= 12 ? 'pm' : 'am';
        break;
      case 'MST':
        out += c.abbr;
        break;
      case 'frac0':
      case 'frac9': {
        const sep = chunk.sep ?? '.';
        let digits = String(c.nanos).padStart(9, '0').slice(0, chunk.digits);
        if (chunk.std === 'frac9') {
          digits = digits.replace(/0+$/, '');
          if (digits) out += sep + digits;
        } else out += sep + digits;
        break;
      }
      default:
        out += formatOffset(c.offset, chunk.std);
    }
  }
  return out;
}

/** Go's time.Parse: the layout's fields read from `value`; zone-less values are UTC. */
export function parseTime(layout: string, value: string): bigint {
  const fail = (elem: string, rest: string): never => {
    throw new TimeError(
      `parsing time ${JSON.stringify(value)} as ${JSON.stringify(layout)}: cannot parse ${JSON.stringify(rest)} as ${JSON.stringify(elem)}`,
    );
  };
  let year = 1;
  let month = 1;
  let day = 1;
  let hour = 0;
  let minute = 0;
  let second = 0;
  let nanos = 0;
  let pm: boolean | undefined;
  let offset: number | undefined;
  let zoneAbbr: string | undefined;
  let rest = value;
  const num = (min: number, max: number, elem: string): number => {
    const m = new RegExp(`^\\d{${min},${max}}`).exec(rest);
    if (!m) fail(elem, rest);
    rest = rest.slice(m![0].length);
    return Number(m![0]);
  };
  const chunks = parseLayout(layout);
  for (let ci = 0; ci < chunks.length; ci++) {
    const chunk = chunks[ci]!;
    if ('lit' in chunk) {
      if (!rest.startsWith(chunk.lit)) fail(chunk.lit, rest);
      rest = rest.slice(chunk.lit.length);
      continue;
    }
    const std = chunk.std;
    switch (std) {
      case '2006': {
        const m = /^\d{4}/.exec(rest);
        if (!m) fail('2006', rest);
        year = Number(m![0]);
        rest = rest.slice(4);
        break;
      }
      case '06':
        year = num(2, 2, '06');
        year += year >= 69 ? 1900 : 2000;
        break;
      case 'January':
      case 'Jan': {
        const names = std === 'January' ? MONTHS : MONTHS.map((m) => m.slice(0, 3));
        const i = names.findIndex((n) => rest.toLowerCase().startsWith(n.toLowerCase()));
        if (i < 0) fail(std, rest);
        month = i + 1;
        rest = rest.slice(names[i]!.length);
        break;
      }
      case '1':
      case '01':
        month = num(std === '01' ? 2 : 1, 2, std);
        if (month < 1 || month > 12) throw new TimeError(`parsing time ${JSON.stringify(value)}: month out of range`);
        break;
      case 'Monday':
      case 'Mon': {
        const names = std === 'Monday' ? DAYS : DAYS.map((d) => d.slice(0, 3));
        const i = names.findIndex((n) => rest.toLowerCase().startsWith(n.toLowerCase()));
        if (i < 0) fail(std, rest);
        rest = rest.slice(names[i]!.length);
        break;
      }
      case '2':
      case '_2':
      case '02':
        if (std === '_2' && rest[0] === ' ') rest = rest.slice(1);
        day = num(std === '02' ? 2 : 1, 2, std);
        break;
      case '__2':
      case '002':
        rest = rest.replace(/^ +/, '');
        num(3, 3, std);
        break;
      case '15':
        hour = num(1, 2, std);
        if (hour > 23) throw new TimeError(`parsing time ${JSON.stringify(value)}: hour out of range`);
        break;
      case '3':
      case '03':
        hour = num(std === '03' ? 2 : 1, 2, std);
        if (hour > 12) throw new TimeError(`parsing time ${JSON.stringify(value)}: hour out of range`);
        break;
      case '4':
      case '04':
        minute = num(std === '04' ? 2 : 1, 2, std);
        if (minute > 59) throw new TimeError(`parsing time ${JSON.stringify(value)}: minute out of range`);
        break;
      case '5':
      case '05': {
        second = num(std === '05' ? 2 : 1, 2, std);
        if (second > 59) throw new TimeError(`parsing time ${JSON.stringify(value)}: second out of range`);
        // Go accepts a fractional second after seconds even when the layout has none.
        const next = chunks[ci + 1];
        const m = /^[.,](\d+)/.exec(rest);
        if (m && !(next && 'std' in next && next.std.startsWith('frac'))) {
          nanos = Number(m[1]!.slice(0, 9).padEnd(9, '0'));
          rest = rest.slice(m[0].length);
        }
        break;
      }
      case 'frac0':
      case 'frac9': {
        const m = std === 'frac0' ? new RegExp(`^[.,](\\d{${chunk.digits}})`).exec(rest) : /^[.,](\d+)/.exec(rest);
        if (!m) {
          if (std === 'frac9') break;
          fail(layout, rest);
        }
        nanos = Number(m![1]!.slice(0, 9).padEnd(9, '0'));
        rest = rest.slice(m![0].length);
        break;
      }
      case 'PM':
      case 'pm': {
        const p = rest.slice(0, 2).toUpperCase();
        if (p !== 'AM' && p !== 'PM') fail(std, rest);
        pm = p === 'PM';
        rest = rest.slice(2);
        break;
      }
      case 'MST': {
        const m = /^(UTC|GMT|[A-Z]{3,5}|[+-]\d+)/.exec(rest);
        if (!m) fail('MST', rest);
        zoneAbbr = m![0];
        rest = rest.slice(zoneAbbr.length);
        if (zoneAbbr === 'UTC' || zoneAbbr === 'GMT') offset = 0;
        break;
      }
      default: {
        if (std.startsWith('Z') && rest[0] === 'Z') {
          offset = 0;
          rest = rest.slice(1);
          break;
        }
        const kind = std.replace(/^Z/, '-');
        const patterns: Record<string, RegExp> = {
          '-07': /^([+-])(\d\d)/,
          '-0700': /^([+-])(\d\d)(\d\d)/,
          '-07:00': /^([+-])(\d\d):(\d\d)/,
          '-070000': /^([+-])(\d\d)(\d\d)(\d\d)/,
          '-07:00:00': /^([+-])(\d\d):(\d\d):(\d\d)/,
        };
        const m = patterns[kind]!.exec(rest);
        if (!m) fail(std, rest);
        const secs = Number(m![2]) * 3600 + Number(m![3] ?? 0) * 60 + Number(m![4] ?? 0);
        offset = m![1] === '-' ? -secs : secs;
        rest = rest.slice(m![0].length);
      }
    }
  }
  if (rest !== '') throw new TimeError(`parsing time ${JSON.stringify(value)}: extra text: ${JSON.stringify(rest)}`);
  if (pm !== undefined) {
    if (pm && hour < 12) hour += 12;
    else if (!pm && hour === 12) hour = 0;
  }
  const dim = new Date(Date.UTC(2000, month, 0));
  dim.setUTCFullYear(year, month, 0);
  if (day < 1 || day > dim.getUTCDate())
    throw new TimeError(`parsing time ${JSON.stringify(value)}: day out of range`);
  return fromCivil(year, month, day, hour, minute, second, nanos, offset === undefined ? UTC : fixedZone(offset, zoneAbbr ?? ''));
}

// ---- durations --------------------------------------------------------------------------------------

const UNITS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  'µs': 1_000n,
  'μs': 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
  d: 86_400_000_000_000n,
  w: 604_800_000_000_000n,
  y: 31_536_000_000_000_000n,
};

const MAX = 1n << 63n;

/** Go's time.ParseDuration, with OPA's extra units d (24h), w (7d) and y (365d). */
export function parseDuration(orig: string): bigint {
  const invalid = (): never => {
    throw new TimeError(`time: invalid duration ${JSON.stringify(orig)}`);
  };
  let s = orig;
  let neg = false;
  if (s !== '' && (s[0] === '-' || s[0] === '+')) {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') invalid();
  let total = 0n;
  while (s !== '') {
    if (!(s[0] === '.' || (s[0]! >= '0' && s[0]! <= '9'))) invalid();
    const intPart = /^\d*/.exec(s)![0];
    s = s.slice(intPart.length);
    let v = 0n;
    for (const c of intPart) {
      v = v * 10n + BigInt(c.charCodeAt(0) - 48);
      if (v >= MAX) invalid();
    }
    let frac = '';
    if (s[0] === '.') {
      s = s.slice(1);
      frac = /^\d*/.exec(s)![0];
      s = s.slice(frac.length);
    }
    if (intPart === '' && frac === '') invalid();
    const unitText = /^[^0-9.]*/.exec(s)![0];
    if (unitText === '') throw new TimeError(`time: missing unit in duration ${JSON.stringify(orig)}`);
    s = s.slice(unitText.length);
    const unit = UNITS[unitText];
    if (unit === undefined)
      throw new TimeError(`time: unknown unit ${JSON.stringify(unitText)} in duration ${JSON.stringify(orig)}`);
    if (v > MAX / unit) invalid();
    v *= unit;
    if (frac !== '') {
      // Go accumulates at most 19 fractional digits and scales with float64.
      const digits = frac.slice(0, 18);
      const f = Number(digits) * (Number(unit) / 10 ** digits.length);
      v += BigInt(Math.trunc(f));
      if (v > MAX) invalid();
    }
    total += v;
    if (total > MAX) invalid();
  }
  if (neg) return -total;
  if (total > MAX - 1n) invalid();
  return total;
}
