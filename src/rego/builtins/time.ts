import { num, type Value } from '../value/index.js';
import { BuiltinError, OperandTypeError, defineBuiltins } from './registry.js';
import {
  NAMED_LAYOUTS,
  TimeError,
  UTC,
  civil,
  formatTime,
  fromCivil,
  loadZone,
  parseDuration,
  parseTime,
  weekdayName,
  type Zone,
} from './gotime.js';
import { intOperand, str } from './operands.js';
import { T } from './types.js';

const MIN_NS = -(1n << 63n);
const MAX_NS = (1n << 63n) - 1n;

/** Go errors from the time package become builtin errors with their text. */
function guard<R>(f: () => R): R {
  try {
    return f();
  } catch (e) {
    if (e instanceof TimeError) throw new BuiltinError(e.message);
    throw e;
  }
}

function safeNs(ns: bigint): Value {
  if (ns < MIN_NS || ns > MAX_NS) throw new BuiltinError('time outside of valid range');
  return num.fromBigInt(ns);
}

interface ZonedTime {
  ns: bigint;
  zone: Zone;
  layout: string;
}

const TIME_OPERAND = 'either number (ns) or [number (ns), string (tz)]';

/** A time operand: ns, or [ns, tz] / [ns, tz, layout]. */
function zoned(v: Value): ZonedTime {
  let nsValue: Value;
  let zone = UTC;
  let layout = '';
  if (Array.isArray(v)) {
    if (v.length === 0) throw new OperandTypeError(1, TIME_OPERAND, v);
    nsValue = v[0]!;
    if (!num.isNumber(nsValue)) throw new OperandTypeError(1, 'number', nsValue);
    if (v.length > 1) {
      const tz = v[1]!;
      if (typeof tz !== 'string') throw new OperandTypeError(1, 'string', tz);
      zone = guard(() => loadZone(tz));
    }
    if (v.length > 2) {
      const lay = v[2]!;
      if (typeof lay !== 'string') throw new OperandTypeError(1, 'string', lay);
      layout = lay;
    }
  } else if (num.isNumber(v)) nsValue = v;
  else throw new OperandTypeError(1, TIME_OPERAND, v);
  const ns = num.toBigInt(num.isInteger(nsValue) ? nsValue : num.floor(nsValue));
  if (ns === undefined || ns < MIN_NS || ns > MAX_NS) throw new BuiltinError('timestamp too big');
  return { ns, zone, layout };
}

const timeArg = T.union(T.number, T.tuple(T.number, T.string), T.tuple(T.number, T.string, T.string));

export const time = defineBuiltins(
  {
    name: 'time.now_ns',
    nondeterministic: true,
    decl: T.fn([], T.number),
    impl: (_args, ctx) => num.fromBigInt(ctx.timeNs),
  },
  {
    name: 'time.parse_ns',
    decl: T.fn([T.string, T.string], T.number),
    impl: ([layout, value]) => {
      const l = NAMED_LAYOUTS[str(layout!)] ?? str(layout!);
      return safeNs(guard(() => parseTime(l, str(value!))));
    },
  },
  {
    name: 'time.parse_rfc3339_ns',
    decl: T.fn([T.string], T.number),
    impl: ([value]) => safeNs(guard(() => parseTime(NAMED_LAYOUTS.RFC3339!, str(value!)))),
  },
  {
    name: 'time.parse_duration_ns',
    decl: T.fn([T.string], T.number),
    impl: ([value]) => num.fromBigInt(guard(() => parseDuration(str(value!)))),
  },
  {
    name: 'time.format',
    decl: T.fn([timeArg], T.string),
    impl: ([v]) => {
      const t = zoned(v!);
      const layout = t.layout === '' ? NAMED_LAYOUTS.RFC3339Nano! : (NAMED_LAYOUTS[t.layout] ?? t.layout);
      return formatTime(t.ns, t.zone, layout);
    },
  },
  {
    name: 'time.date',
    decl: T.fn([T.union(T.number, T.tuple(T.number, T.string))], T.tuple(T.number, T.number, T.number)),
    impl: ([v]) => {
      const t = zoned(v!);
      const c = civil(t.ns, t.zone);
      return [c.year, c.month, c.day];
    },
  },
  {
    name: 'time.clock',
    decl: T.fn([T.union(T.number, T.tuple(T.number, T.string))], T.tuple(T.number, T.number, T.number)),
    impl: ([v]) => {
      const t = zoned(v!);
      const c = civil(t.ns, t.zone);
      return [c.hour, c.minute, c.second];
    },
  },
  {
    name: 'time.weekday',
    decl: T.fn([T.union(T.number, T.tuple(T.number, T.string))], T.string),
    impl: ([v]) => {
      const t = zoned(v!);
      return weekdayName(civil(t.ns, t.zone).weekday);
    },
  },
  {
    name: 'time.add_date',
    decl: T.fn([T.number, T.number, T.number, T.number], T.number),
    impl: ([v, y, m, d]) => {
      const t = zoned(v!);
      const c = civil(t.ns, t.zone);
      const years = intOperand(y!, 2);
      const months = intOperand(m!, 3);
      const days = intOperand(d!, 4);
      return safeNs(
        fromCivil(c.year + years, c.month + months, c.day + days, c.hour, c.minute, c.second, c.nanos, t.zone),
      );
    },
  },
  {
    name: 'time.diff',
    decl: T.fn(
      [T.union(T.number, T.tuple(T.number, T.string)), T.union(T.number, T.tuple(T.number, T.string))],
      T.arrayOf(T.number),
    ),
    impl: ([a, b]) => {
      const t1 = zoned(a!);
      const t2 = zoned(b!);
      let [x, y] = [t1.ns, t2.ns];
      if (x > y) [x, y] = [y, x];
      const c1 = civil(x, t1.zone);
      const c2 = civil(y, t1.zone);
      let year = c2.year - c1.year;
      let month = c2.month - c1.month;
      let day = c2.day - c1.day;
      let hour = c2.hour - c1.hour;
      let min = c2.minute - c1.minute;
      let sec = c2.second - c1.second;
      if (sec < 0) {
        sec += 60;
        min--;
      }
      if (min < 0) {
        min += 60;
        hour--;
      }
      if (hour < 0) {
        hour += 24;
        day--;
      }
      if (day < 0) {
        const overflow = new Date(Date.UTC(2000, 0, 1));
        overflow.setUTCFullYear(c1.year, c1.month - 1, 32);
        day += 32 - overflow.getUTCDate();
        month--;
      }
      if (month < 0) {
        month += 12;
        year--;
      }
      return [year, month, day, hour, min, sec];
    },
  },
);
