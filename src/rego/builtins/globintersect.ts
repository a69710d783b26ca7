import { BuiltinError } from './registry.js';

/**
 * `regex.globs_match`: whether two "glob-like" regular expressions (literals, `.`, `[…]` classes,
 * each optionally followed by `*` or `+`, `\` escaping) match at least one common non-empty string.
 * Decided by a search over pairs of positions in both token lists, so it is linear in their product.
 */

interface CharClass {
  /** inclusive code point ranges */
  readonly ranges: readonly (readonly [number, number])[];
  readonly negated: boolean;
}

interface Token {
  readonly set: CharClass | 'any';
  readonly star: boolean;
}

function tokenize(glob: string): Token[] {
  const cps = [...glob].map((c) => c.codePointAt(0)!);
  const out: Token[] = [];
  let i = 0;
  while (i < cps.length) {
    const c = cps[i]!;
    let set: CharClass | 'any';
    if (c === 0x2e) {
      set = 'any';
      i++;
    } else if (c === 0x5b) {
      const [cls, next] = parseClass(cps, i + 1, glob);
      set = cls;
      i = next;
    } else if (c === 0x5c) {
      if (i + 1 >= cps.length) throw new BuiltinError(`invalid glob ${JSON.stringify(glob)}: trailing \\`);
      set = { ranges: [[cps[i + 1]!, cps[i + 1]!]], negated: false };
      i += 2;
    } else if (c === 0x2a || c === 0x2b) {
      throw new BuiltinError(`invalid glob ${JSON.stringify(glob)}: repetition without a preceding symbol`);
    } else {
      set = { ranges: [[c, c]], negated: false };
      i++;
    }
    const q = cps[i];
    if (q === 0x2a) {
      out.push({ set, star: true });
      i++;
    } else if (q === 0x2b) {
      out.push({ set, star: false }, { set, star: true });
      i++;
    } else out.push({ set, star: false });
  }
  return out;
}

function parseClass(cps: number[], start: number, glob: string): [CharClass, number] {
  let i = start;
  let negated = false;
  if (cps[i] === 0x5e) {
    negated = true;
    i++;
  }
  const ranges: [number, number][] = [];
  const read = (): number => {
    let c = cps[i]!;
    if (c === 0x5c) {
      i++;
      c = cps[i]!;
    }
    i++;
    return c;
  };
  let first = true;
  while (i < cps.length && (cps[i] !== 0x5d || first)) {
    first = false;
    const lo = read();
    if (cps[i] === 0x2d && i + 1 < cps.length && cps[i + 1] !== 0x5d) {
      i++;
      const hi = read();
      if (hi < lo) throw new BuiltinError(`invalid glob ${JSON.stringify(glob)}: invalid character class range`);
      ranges.push([lo, hi]);
    } else ranges.push([lo, lo]);
  }
  if (i >= cps.length) throw new BuiltinError(`invalid glob ${JSON.stringify(glob)}: missing closing ]`);
  return [{ ranges, negated }, i + 1];
}

function contains(cls: CharClass, c: number): boolean {
  const inside = cls.ranges.some(([lo, hi]) => c >= lo && c <= hi);
  return inside !== cls.negated;
}

/** Whether some character belongs to both sets. */
function overlaps(a: CharClass | 'any', b: CharClass | 'any'): boolean {
  if (a === 'any') return b === 'any' || b.negated || b.ranges.length > 0;
  if (b === 'any') return a.negated || a.ranges.length > 0;
  if (!a.negated && !b.negated) return a.ranges.some(([lo, hi]) => b.ranges.some(([l, h]) => lo <= h && l <= hi));
  if (a.negated && b.negated) return true;
  const [pos, neg] = a.negated ? [b, a] : [a, b];
  // some character of a positive range outside every range of the negated class
  for (const [lo, hi] of pos.ranges) {
    for (const c of [lo, hi, ...neg.ranges.flatMap(([l, h]) => [l - 1, h + 1])]) {
      if (c >= lo && c <= hi && contains(neg, c)) return true;
    }
  }
  return false;
}

export function globsIntersect(a: string, b: string): boolean {
  const x = tokenize(a);
  const y = tokenize(b);
  const seen = new Set<number>();
  const width = y.length + 1;
  const stack: [number, number, number][] = [[0, 0, 0]];
  while (stack.length) {
    const [i, j, consumed] = stack.pop()!;
    const key = ((i * width + j) << 1) | consumed;
    if (seen.has(key)) continue;
    seen.add(key);
    if (i === x.length && j === y.length) {
      if (consumed) return true;
      continue;
    }
    const t = x[i];
    const u = y[j];
    if (t?.star) stack.push([i + 1, j, consumed]);
    if (u?.star) stack.push([i, j + 1, consumed]);
    if (t && u && overlaps(t.set, u.set)) stack.push([t.star ? i : i + 1, u.star ? j : j + 1, 1]);
  }
  return false;
}
