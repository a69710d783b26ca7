/**
 * Go-style durations, as Kubernetes, Vault and OPA write them: `20m`, `768h`, `1h30m`, `1.5s`,
 * `300ms`, `0s`; Vault also accepts plain seconds (`3600` or the number 3600) and a `d` suffix.
 * Values are held in whole nanoseconds as bigint to round-trip exactly; most callers want seconds.
 */

const UNIT_NS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n,
  μs: 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
  d: 86_400_000_000_000n,
};

export class DurationError extends Error {
  constructor(readonly input: string) {
    super(`invalid duration ${JSON.stringify(input)}`);
    this.name = 'DurationError';
  }
}

const PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h|d)/y;

/** Parse a duration to nanoseconds. A bare number (or numeric string) counts as seconds. */
export function parseDurationNs(input: string | number): bigint {
  if (typeof input === 'number') {
    if (!Number.isFinite(input) || input < 0) throw new DurationError(String(input));
    return BigInt(Math.round(input * 1e9));
  }
  const text = input.trim();
  if (/^\d+$/.test(text)) return BigInt(text) * UNIT_NS.s!;
  if (text === '0') return 0n;
  let rest = text;
  let negative = false;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    negative = rest.startsWith('-');
    rest = rest.slice(1);
  }
  if (rest === '') throw new DurationError(input);
  let total = 0n;
  PART.lastIndex = 0;
  let pos = 0;
  while (pos < rest.length) {
    PART.lastIndex = pos;
    const m = PART.exec(rest);
    if (!m) throw new DurationError(input);
    const [, num, unit] = m as unknown as [string, string, string];
    const scale = UNIT_NS[unit]!;
    const [whole, frac = ''] = num.split('.');
    total += BigInt(whole || '0') * scale;
    if (frac) total += (BigInt(frac) * scale) / 10n ** BigInt(frac.length);
    pos = PART.lastIndex;
  }
  return negative ? -total : total;
}

/** Parse a duration to whole seconds (rounded down), the unit Vault's TTL fields use. */
export function parseDurationSeconds(input: string | number): number {
  return Number(parseDurationNs(input) / 1_000_000_000n);
}

/** Print nanoseconds as Go's time.Duration.String() does: `1h30m0s`, `20m0s`, `1.5s`, `300ms`, `0s`. */
export function formatDurationNs(ns: bigint): string {
  if (ns === 0n) return '0s';
  const sign = ns < 0n ? '-' : '';
  let u = ns < 0n ? -ns : ns;
  if (u < 1_000_000_000n) {
    const [unit, scale] = u < 1_000n ? ['ns', 1n] : u < 1_000_000n ? ['µs', 1_000n] : ['ms', 1_000_000n];
    return sign + fraction(u, scale as bigint) + unit;
  }
  const h = u / UNIT_NS.h!;
  u -= h * UNIT_NS.h!;
  const m = u / UNIT_NS.m!;
  u -= m * UNIT_NS.m!;
  let out = sign;
  if (h > 0n) out += `${h}h`;
  if (h > 0n || m > 0n) out += `${m}m`;
  return out + fraction(u, UNIT_NS.s!) + 's';
}

/** Print whole seconds in Go's form (`20m0s`, `768h0m0s`). */
export function formatDurationSeconds(seconds: number): string {
  return formatDurationNs(BigInt(Math.trunc(seconds)) * 1_000_000_000n);
}

function fraction(value: bigint, scale: bigint): string {
  const whole = value / scale;
  const rem = value % scale;
  if (rem === 0n) return String(whole);
  const digits = String(scale).length - 1;
  return `${whole}.${String(rem).padStart(digits, '0').replace(/0+$/, '')}`;
}
