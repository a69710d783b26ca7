import { BigNum, numberText } from './number.js';
import { RegoObject, RegoSet, type Value } from './value.js';

/**
 * A value written as a Rego term, as OPA's `String()` prints it (used by `sprintf` for
 * non-scalar operands, `print`, and error messages): strings quoted Go-style, `[1, 2]`,
 * `{"a": 1}`, `{1, 2}`, the empty set as `set()`.
 */
export function toRegoText(v: Value): string {
  switch (typeof v) {
    case 'string':
      return goQuote(v);
    case 'number':
      return numberText(v);
    case 'boolean':
      return v ? 'true' : 'false';
  }
  if (v === null) return 'null';
  if (v instanceof BigNum) return numberText(v);
  if (Array.isArray(v)) return '[' + v.map(toRegoText).join(', ') + ']';
  if (v instanceof RegoSet) return v.size === 0 ? 'set()' : '{' + v.values().map(toRegoText).join(', ') + '}';
  const o = v as RegoObject;
  return '{' + o.entries().map(([k, w]) => `${toRegoText(k)}: ${toRegoText(w)}`).join(', ') + '}';
}

/** Go's `strconv.Quote`: printable runes kept, the rest escaped. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    switch (ch) {
      case '"':
        out += '\\"';
        continue;
      case '\\':
        out += '\\\\';
        continue;
      case '\u0007':
        out += '\\a';
        continue;
      case '\b':
        out += '\\b';
        continue;
      case '\f':
        out += '\\f';
        continue;
      case '\n':
        out += '\\n';
        continue;
      case '\r':
        out += '\\r';
        continue;
      case '\t':
        out += '\\t';
        continue;
      case '\v':
        out += '\\v';
        continue;
    }
    if (isPrintable(c)) out += ch;
    else if (c < 0x80) out += '\\x' + c.toString(16).padStart(2, '0');
    else if (c >= 0xd800 && c <= 0xdfff) out += '\\ufffd';
    else if (c < 0x10000) out += '\\u' + c.toString(16).padStart(4, '0');
    else out += '\\U' + c.toString(16).padStart(8, '0');
  }
  return out + '"';
}

const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]|[\p{Zs}]/u;

function isPrintable(c: number): boolean {
  if (c === 0x20) return true;
  if (c < 0x20 || c === 0x7f) return false;
  if (c < 0x7f) return true;
  return !NON_PRINTABLE.test(String.fromCodePoint(c));
}
