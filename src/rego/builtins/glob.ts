import { RE2JS } from 're2js';
import { typeName, type Value } from '../value/index.js';
import { BuiltinError, OperandTypeError, defineBuiltins } from './registry.js';
import { compileRegex } from './regex.js';
import { arr, str } from './operands.js';
import { T } from './types.js';

/**
 * `glob.match` with the syntax of the Go library OPA uses (gobwas/glob): `*` (any run without
 * delimiters), `**` (any run), `?` (one non-delimiter character), `[a-z]`, `[!a-z]`, `{a,b}`
 * alternatives (nestable) and `\` escapes. A glob is translated once to an RE2 pattern, so matching
 * is linear and shares the regex cache.
 */

const SPECIALS = new Set(['*', '?', '\\', '[', ']', '{', '}']);

function charClassEscape(c: string): string {
  return /[\\\]\[^-]/.test(c) ? '\\' + c : c;
}

export function globToRegex(glob: string, delimiters: readonly string[]): string {
  const cs = [...glob];
  const notDelim = delimiters.length ? `[^${delimiters.map(charClassEscape).join('')}]` : '.';
  let out = '(?s)^';
  let depth = 0;
  let i = 0;
  while (i < cs.length) {
    const c = cs[i]!;
    if (c === '*') {
      if (cs[i + 1] === '*') {
        out += '.*';
        i += 2;
      } else {
        out += notDelim + '*';
        i++;
      }
    } else if (c === '?') {
      out += notDelim;
      i++;
    } else if (c === '[') {
      i++;
      let cls = '[';
      if (cs[i] === '!') {
        cls += '^';
        i++;
      }
      let items = 0;
      for (;;) {
        if (i >= cs.length) throw new BuiltinError('unexpected end of input');
        let lo = cs[i]!;
        if (lo === ']' && items > 0) break;
        if (lo === '\\') {
          i++;
          if (i >= cs.length) throw new BuiltinError('unexpected end of input');
          lo = cs[i]!;
        }
        i++;
        if (cs[i] === '-' && i + 1 < cs.length && cs[i + 1] !== ']') {
          let hi = cs[i + 1]!;
          i += 2;
          if (hi === '\\') {
            if (i >= cs.length) throw new BuiltinError('unexpected end of input');
            hi = cs[i]!;
            i++;
          }
          if (hi.codePointAt(0)! < lo.codePointAt(0)!)
            throw new BuiltinError(`hi character '${hi}' should be greater than lo '${lo}'`);
          cls += charClassEscape(lo) + '-' + charClassEscape(hi);
        } else cls += charClassEscape(lo);
        items++;
      }
      i++;
      out += cls + ']';
    } else if (c === '{') {
      depth++;
      out += '(?:';
      i++;
    } else if (c === '}' && depth > 0) {
      depth--;
      out += ')';
      i++;
    } else if (c === ',' && depth > 0) {
      out += '|';
      i++;
    } else if (c === '\\') {
      if (i + 1 >= cs.length) throw new BuiltinError('unexpected end of input: escape at end of pattern');
      out += RE2JS.quote(cs[i + 1]!);
      i += 2;
    } else {
      out += RE2JS.quote(c);
      i++;
    }
  }
  if (depth > 0) throw new BuiltinError('unexpected end of input: unclosed {');
  return out + '$';
}

function delimitersOf(v: Value): string[] {
  if (v === null) return [];
  const items = arr(v);
  if (items.length === 0) return ['.'];
  return items.map((d) => {
    if (typeof d !== 'string') throw new OperandTypeError(`operand 2 must be array of strings but got array containing ${typeName(d)}`);
    if ([...d].length !== 1) throw new OperandTypeError('operand 2 must be array of runes but got array containing string');
    return d;
  });
}

export const globs = defineBuiltins(
  {
    name: 'glob.match',
    decl: T.fn([T.string, T.union(T.arrayOf(T.string), T.null), T.string], T.boolean),
    impl: ([pattern, delimiters, subject]) =>
      compileRegex(globToRegex(str(pattern!), delimitersOf(delimiters!))).match(str(subject!)) as boolean,
  },
  {
    name: 'glob.quote_meta',
    decl: T.fn([T.string], T.string),
    impl: ([pattern]) => [...str(pattern!)].map((c) => (SPECIALS.has(c) ? '\\' + c : c)).join(''),
  },
);
