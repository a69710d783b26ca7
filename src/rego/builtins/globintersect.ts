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

function invalid(glob: string, pos: number, msg: string): never {
  throw new BuiltinError(`input:${glob}, pos:${pos}, ${msg}: the input provided is invalid`);
}

/** Tokens of a glob, with the error texts of the Go library OPA uses (glob-intersection). */
function tokenize(glob: string): Token[] {
  const cps = [...glob];
  const out: Token[] = [];
  /** Next rune at `i`: [next index, rune, escaped]. */
  const next = (i: number): [number, string, boolean] => {
    if (cps[i] === '\\') {
      if (i === cps.length - 1) invalid(glob, i, 'input ends with a \\\\ (escape) character');
      return [i + 2, cps[i + 1]!, true];
    }
    return [i + 1, cps[i]!, false];
  };
  let i = 0;
  while (i < cps.length) {
    let r: string;
    let escaped: boolean;
    [i, r, escaped] = next(i);
    let set: CharClass | 'any';
    if (!escaped && r === '.') set = 'any';
    else if (!escaped && r === ']') invalid(glob, i, "set-close ']' with no preceding '['");
    else if (!escaped && r === '[') [set, i] = readSet(glob, cps, i, next);
    else if (!escaped && (r === '*' || r === '+')) invalid(glob, i, `flag '${r}' must be preceded by a non-flag`);
    else set = { ranges: [[r.codePointAt(0)!, r.codePointAt(0)!]], negated: false };
    const flag = cps[i];
    if (flag === '*') {
      out.push({ set: set!, star: true });
      i++;
    } else if (flag === '+') {
      out.push({ set: set!, star: false }, { set: set!, star: true });
      i++;
    } else out.push({ set: set!, star: false });
  }
  return out;
}

function readSet(
  glob: string,
  cps: string[],
  start: number,
  next: (i: number) => [number, string, boolean],
): [CharClass, number] {
  const ranges: [number, number][] = [];
  let prev: number | undefined;
  let i = start;
  while (i < cps.length) {
    let r: string;
    let escaped: boolean;
    [i, r, escaped] = next(i);
    if (!escaped && r === ']') return [{ ranges, negated: false }, i];
    if (!escaped && r === '-') {
      if (prev === undefined) invalid(glob, i, "range character '-' must be preceded by a Unicode character");
      if (i >= cps.length - 1) invalid(glob, i, "range character '-' must be followed by a Unicode character");
      let hi: string;
      [i, hi, escaped] = next(i);
      if (!escaped && (hi === ']' || hi === '-')) invalid(glob, i, "range character '-' cannot be followed by a special symbol");
      const h = hi.codePointAt(0)!;
      if (h < prev!) invalid(glob, i, `range is out of order: '${hi}' comes before '${String.fromCodePoint(prev!)}' in Unicode`);
      ranges.push([prev!, h]);
      prev = undefined;
      continue;
    }
    prev = r.codePointAt(0)!;
    ranges.push([prev, prev]);
  }
  return invalid(glob, i, 'found [ without matching ]');
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
