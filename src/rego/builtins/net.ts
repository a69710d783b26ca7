import { RegoObject, RegoSet, type Value } from '../value/index.js';
import { BuiltinError, OperandTypeError, defineBuiltins } from './registry.js';
import { str } from './operands.js';
import { T, anyArray, anyObject, anySet } from './types.js';

/**
 * CIDR builtins with Go's net package semantics: addresses are bigints of 32 or 128 bits;
 * IPv4-mapped IPv6 addresses count as IPv4; output in Go's canonical text.
 */

interface IP {
  readonly bits: 32 | 128;
  readonly value: bigint;
}

interface Net {
  readonly ip: IP; // as written (not masked)
  readonly prefix: number;
}

function parseIPv4(s: string): bigint | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  let v = 0n;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || (p.length > 1 && p[0] === '0')) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    v = (v << 8n) | BigInt(n);
  }
  return v;
}

function parseIPv6(text: string): bigint | undefined {
  let s = text;
  if (s.includes('.')) {
    const lastColon = s.lastIndexOf(':');
    const v4 = parseIPv4(s.slice(lastColon + 1));
    if (v4 === undefined) return undefined;
    s = `${s.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const group = (g: string) => (g === '' ? [] : g.split(':'));
  let groups: string[];
  if (halves.length === 2) {
    const left = group(halves[0]!);
    const right = group(halves[1]!);
    const missing = 8 - left.length - right.length;
    if (missing < 1) return undefined;
    groups = [...left, ...Array<string>(missing).fill('0'), ...right];
  } else groups = group(s);
  if (groups.length !== 8) return undefined;
  let v = 0n;
  for (const g of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
    v = (v << 16n) | BigInt(parseInt(g, 16));
  }
  return v;
}

/** Go's net.ParseIP; IPv4-mapped IPv6 becomes IPv4. */
export function parseIP(s: string): IP | undefined {
  const v4 = parseIPv4(s);
  if (v4 !== undefined) return { bits: 32, value: v4 };
  if (!s.includes(':')) return undefined;
  const v6 = parseIPv6(s);
  if (v6 === undefined) return undefined;
  if (v6 >> 32n === 0xffffn) return { bits: 32, value: v6 & 0xffffffffn };
  return { bits: 128, value: v6 };
}

function parseCIDR(s: string): Net {
  const slash = s.indexOf('/');
  const ip = slash < 0 ? undefined : parseIP(s.slice(0, slash));
  const prefixText = slash < 0 ? '' : s.slice(slash + 1);
  const isV6Text = s.slice(0, Math.max(slash, 0)).includes(':');
  const maxBits = ip ? (isV6Text ? 128 : ip.bits) : 0;
  if (!ip || !/^\d{1,3}$/.test(prefixText) || Number(prefixText) > maxBits || (prefixText.length > 1 && prefixText[0] === '0')) {
    throw new BuiltinError(`invalid CIDR address: ${s}`);
  }
  let prefix = Number(prefixText);
  // an IPv4-mapped address written in IPv6 form keeps an IPv6 prefix length
  if (isV6Text && ip.bits === 32) prefix = Math.max(prefix - 96, 0);
  return { ip, prefix };
}

function mask(bits: number, prefix: number): bigint {
  const all = (1n << BigInt(bits)) - 1n;
  return all ^ ((1n << BigInt(bits - prefix)) - 1n);
}

function first(n: Net): bigint {
  return n.ip.value & mask(n.ip.bits, n.prefix);
}

function last(n: Net): bigint {
  return first(n) | ((1n << BigInt(n.ip.bits - n.prefix)) - 1n);
}

function contains(n: Net, ip: IP): boolean {
  if (ip.bits !== n.ip.bits) return false;
  return (ip.value & mask(n.ip.bits, n.prefix)) === first(n);
}

export function formatIP(ip: IP): string {
  if (ip.bits === 32) {
    const v = ip.value;
    return [24n, 16n, 8n, 0n].map((s) => String((v >> s) & 0xffn)).join('.');
  }
  const groups: number[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((ip.value >> BigInt(i * 16)) & 0xffffn));
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return hex.slice(0, bestStart).join(':') + '::' + hex.slice(bestStart + bestLen).join(':');
}

function formatNet(n: Net): string {
  return `${formatIP(n.ip)}/${n.prefix}`;
}

function netContains(cidr: string, other: string): boolean {
  const a = parseCIDR(cidr);
  const ip = parseIP(other);
  if (ip) return contains(a, ip);
  let b: Net;
  try {
    b = parseCIDR(other);
  } catch {
    throw new BuiltinError(`not a valid textual representation of an IP address or CIDR: ${other}`);
  }
  return contains(a, { bits: b.ip.bits, value: first(b) }) && contains(a, { bits: b.ip.bits, value: last(b) });
}

/** The (cidr, key) pairs of a contains_matches operand. */
function matchTerms(operand: number, v: Value): [string, Value][] {
  const cidrOf = (x: Value): string => {
    const c = typeof x === 'string' ? x : Array.isArray(x) && x.length > 0 ? x[0] : undefined;
    if (c === undefined) throw new BuiltinError(`operand ${operand}: element must be string or non-empty array`);
    if (typeof c !== 'string') throw new OperandTypeError(1, 'string', c);
    return c;
  };
  if (typeof v === 'string') return [[v, v]];
  if (Array.isArray(v)) return v.map((x, i) => [cidrOf(x), i]);
  if (v instanceof RegoSet) return v.values().map((x) => [cidrOf(x), x]);
  if (v instanceof RegoObject) return v.entries().map(([k, x]) => [cidrOf(x), k]);
  return [];
}

function classfulPrefix(v4: bigint): number {
  const top = Number(v4 >> 24n);
  return top < 0x80 ? 8 : top < 0xc0 ? 16 : 24;
}

function mergeNetworks(items: readonly Value[]): string[] {
  const nets = items.map((x): Net => {
    if (typeof x !== 'string') throw new BuiltinError('element must be string');
    const ip = parseIP(x);
    if (!ip) return parseCIDR(x);
    if (ip.bits === 32) return { ip, prefix: classfulPrefix(ip.value) };
    throw new BuiltinError('IPv6 invalid: needs prefix length');
  });
  const out: string[] = [];
  for (const bits of [32, 128] as const) {
    type Range = { first: bigint; last: bigint; net?: Net };
    const ranges: Range[] = nets
      .filter((n) => n.ip.bits === bits)
      .map((n) => ({ first: first(n), last: last(n), net: n }))
      .sort((a, b) => (a.last !== b.last ? (a.last < b.last ? -1 : 1) : a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
    for (let i = ranges.length - 1; i > 0; i--) {
      const cur = ranges[i]!;
      const prev = ranges[i - 1]!;
      if (cur.first - 1n <= prev.last) {
        ranges[i - 1] = { first: prev.first < cur.first ? prev.first : cur.first, last: cur.last };
        ranges.splice(i, 1);
      }
    }
    for (const r of ranges) {
      if (r.net) out.push(formatNet(r.net));
      else out.push(...rangeToCIDRs(bits, r.first, r.last));
    }
  }
  return out;
}

function rangeToCIDRs(bits: 32 | 128, lo: bigint, hi: bigint): string[] {
  const out: string[] = [];
  let cur = lo;
  while (cur <= hi) {
    let size = 0;
    while (size < bits) {
      const block = 1n << BigInt(size + 1);
      if (cur % block !== 0n || cur + block - 1n > hi) break;
      size++;
    }
    out.push(`${formatIP({ bits, value: cur })}/${bits - size}`);
    cur += 1n << BigInt(size);
  }
  return out;
}

export const net = defineBuiltins(
  {
    name: 'net.cidr_contains',
    decl: T.fn([T.string, T.string], T.boolean),
    impl: ([a, b]) => netContains(str(a!), str(b!)),
  },
  {
    name: 'net.cidr_overlap',
    deprecated: true,
    decl: T.fn([T.string, T.string], T.boolean),
    impl: ([a, b]) => netContains(str(a!), str(b!)),
  },
  {
    name: 'net.cidr_intersects',
    decl: T.fn([T.string, T.string], T.boolean),
    impl: ([a, b]) => {
      const x = parseCIDR(str(a!));
      const y = parseCIDR(str(b!));
      return contains(x, { bits: y.ip.bits, value: first(y) }) || contains(y, { bits: x.ip.bits, value: first(x) });
    },
  },
  {
    name: 'net.cidr_contains_matches',
    decl: T.fn(
      [T.union(T.string, anyArray, anySet, anyObject), T.union(T.string, anyArray, anySet, anyObject)],
      T.setOf(T.tuple(T.any, T.any)),
    ),
    impl: ([a, b]) => {
      const out = new RegoSet();
      for (const [c1, k1] of matchTerms(1, a!))
        for (const [c2, k2] of matchTerms(2, b!)) if (netContains(c1, c2)) out.add([k1, k2]);
      return out;
    },
  },
  {
    name: 'net.cidr_expand',
    decl: T.fn([T.string], T.setOf(T.string)),
    impl: ([c], ctx) => {
      const n = parseCIDR(str(c!));
      const out = new RegoSet();
      let count = 0;
      for (let v = first(n); v <= last(n); v++) {
        if ((++count & 0x3ff) === 0) ctx.checkCancelled();
        out.add(formatIP({ bits: n.ip.bits, value: v }));
      }
      return out;
    },
  },
  {
    name: 'net.cidr_merge',
    decl: T.fn([T.union(T.arrayOf(T.string), T.setOf(T.string))], T.setOf(T.string)),
    impl: ([v]) => new RegoSet(mergeNetworks(Array.isArray(v) ? v : (v as RegoSet).values())),
  },
  {
    name: 'net.cidr_is_valid',
    decl: T.fn([T.string], T.boolean),
    impl: ([c]) => {
      try {
        parseCIDR(str(c!));
        return true;
      } catch {
        return false;
      }
    },
  },
  {
    name: 'net.lookup_ip_addr',
    nondeterministic: true,
    unsupported: 'net.lookup_ip_addr needs DNS, which this evaluator does not perform',
    decl: T.fn([T.string], T.setOf(T.string)),
    impl: () => undefined,
  },
);

