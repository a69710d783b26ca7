import YAML from 'yaml';
import {
  RegoObject,
  RegoSet,
  fromJSON,
  parseJSON,
  stringifyJSON,
  toJSON,
  typeName,
  type Value,
} from '../value/index.js';
import { BuiltinError, OperandTypeError, defineBuiltins } from './registry.js';
import { obj, str } from './operands.js';
import { T } from './types.js';

// ---- base64 / hex -------------------------------------------------------------------------------

const STD = /^[A-Za-z0-9+/]*={0,2}$/;
const URL = /^[A-Za-z0-9_-]*={0,2}$/;

/** Go's strict base64 decoding: canonical alphabet, padding required. */
function decodeBase64(s: string, alphabet: RegExp, kind: 'base64' | 'base64url'): Buffer {
  const clean = s.replace(/[\r\n]/g, '');
  if (!alphabet.test(clean) || clean.length % 4 !== 0) {
    throw new BuiltinError(`illegal base64 data at input byte ${illegalByte(clean, alphabet)}`);
  }
  return Buffer.from(clean, kind);
}

/** Index of the first character Go's decoder rejects. */
function illegalByte(s: string, alphabet: RegExp): number {
  const symbol = alphabet === STD ? /[A-Za-z0-9+/]/ : /[A-Za-z0-9_-]/;
  for (let i = 0; i < s.length; i++) if (!symbol.test(s[i]!)) return i;
  return s.length;
}

function bytesToString(b: Buffer): string {
  return b.toString('utf8');
}

// ---- URL query (Go's net/url) -------------------------------------------------------------------

function queryEscape(s: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-_.~]/.test(c)) out += c;
    else if (c === ' ') out += '+';
    else out += '%' + byte.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

function queryUnescape(s: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '%') {
      const hex = s.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) {
        throw new BuiltinError(`invalid URL escape ${JSON.stringify(s.slice(i, i + 3))}`);
      }
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else if (c === '+') bytes.push(0x20);
    else bytes.push(...Buffer.from(c, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

// ---- JSON / YAML --------------------------------------------------------------------------------

function unmarshalJSON(text: string): Value {
  try {
    return parseJSON(text);
  } catch (e) {
    throw new BuiltinError(e instanceof Error ? e.message : String(e));
  }
}

function isValidJSON(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** YAML text → value, with integers of any size exact. */
export function parseYAML(text: string): Value {
  const doc = YAML.parseDocument(text, { intAsBigInt: true, uniqueKeys: true });
  if (doc.errors.length) throw new BuiltinError(doc.errors[0]!.message.split('\n')[0]!);
  return fromJSON(doc.toJS({ maxAliasCount: 100 }) ?? null);
}

function marshalYAML(v: Value): string {
  return YAML.stringify(toJSON(v), { sortMapEntries: true, lineWidth: 0, indentSeq: false });
}

function marshalWithOptions(v: Value, opts: RegoObject): string {
  let indent = '\t';
  let prefix = '';
  let implicitPretty = false;
  let explicitPretty: boolean | undefined;
  for (const [k, val] of opts.entries()) {
    if (typeof k !== 'string') throw new OperandTypeError('operand 2 must be object with string keys');
    switch (k) {
      case 'prefix':
        if (typeof val !== 'string') throw new OperandTypeError(`operand 2 key prefix: must be a string`);
        prefix = val;
        implicitPretty = true;
        break;
      case 'indent':
        if (typeof val !== 'string') throw new OperandTypeError(`operand 2 key indent: must be a string`);
        indent = val;
        implicitPretty = true;
        break;
      case 'pretty':
        if (typeof val !== 'boolean') throw new OperandTypeError('operand 2 key pretty: must be a boolean');
        explicitPretty = (explicitPretty ?? false) || val;
        break;
      default:
        throw new OperandTypeError(`operand 2 object contained unknown key ${k}`);
    }
  }
  const pretty = explicitPretty ?? implicitPretty;
  if (!pretty) return stringifyJSON(v, undefined, { escapeHTML: true });
  return prefix + stringifyJSON(v, indent, { escapeHTML: true, prefix });
}

// ---- builtins -----------------------------------------------------------------------------------

export const encoding = defineBuiltins(
  {
    name: 'base64.encode',
    decl: T.fn([T.string], T.string),
    impl: ([s]) => Buffer.from(str(s!), 'utf8').toString('base64'),
  },
  {
    name: 'base64.decode',
    decl: T.fn([T.string], T.string),
    impl: ([s]) => bytesToString(decodeBase64(str(s!), STD, 'base64')),
  },
  {
    name: 'base64.is_valid',
    decl: T.fn([T.string], T.boolean),
    impl: ([s]) => {
      try {
        decodeBase64(str(s!), STD, 'base64');
        return true;
      } catch {
        return false;
      }
    },
  },
  {
    name: 'base64url.encode',
    decl: T.fn([T.string], T.string),
    impl: ([s]) => {
      const raw = Buffer.from(str(s!), 'utf8').toString('base64url');
      return raw + '='.repeat((4 - (raw.length % 4)) % 4);
    },
  },
  {
    name: 'base64url.encode_no_pad',
    decl: T.fn([T.string], T.string),
    impl: ([s]) => Buffer.from(str(s!), 'utf8').toString('base64url'),
  },
  {
    name: 'base64url.decode',
    decl: T.fn([T.string], T.string),
    impl: ([s]) => bytesToString(decodeBase64(padBase64url(str(s!)), URL, 'base64url')),
  },
  {
    name: 'hex.encode',
    decl: T.fn([T.string], T.string),
    impl: ([s]) => Buffer.from(str(s!), 'utf8').toString('hex'),
  },
  {
    name: 'hex.decode',
    decl: T.fn([T.string], T.string),
    impl: ([s]) => {
      const text = str(s!);
      const bad = /[^0-9a-fA-F]/.exec(text);
      if (bad) {
        const cp = bad[0].codePointAt(0)!;
        throw new BuiltinError(
          `encoding/hex: invalid byte: U+${cp.toString(16).toUpperCase().padStart(4, '0')} ${quoteRune(bad[0])}`,
        );
      }
      if (text.length % 2 !== 0) throw new BuiltinError('encoding/hex: odd length hex string');
      return bytesToString(Buffer.from(text, 'hex'));
    },
  },
  {
    name: 'urlquery.encode',
    decl: T.fn([T.string], T.string),
    impl: ([s]) => queryEscape(str(s!)),
  },
  {
    name: 'urlquery.decode',
    decl: T.fn([T.string], T.string),
    impl: ([s]) => queryUnescape(str(s!)),
  },
  {
    name: 'urlquery.encode_object',
    decl: T.fn([T.objectOf(T.string, T.union(T.string, T.arrayOf(T.string), T.setOf(T.string)))], T.string),
    impl: ([o]) => {
      const parts: string[] = [];
      const entries = [...obj(o!).entries()].sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : 1));
      for (const [k, v] of entries) {
        if (typeof k !== 'string') throw new OperandTypeError('operand 1 must be object with string keys');
        const values =
          typeof v === 'string' ? [v] : Array.isArray(v) ? v : v instanceof RegoSet ? v.values() : undefined;
        if (values === undefined)
          throw new OperandTypeError(`operand 1 values must be string, array[string], or set[string] but got ${typeName(v)}`);
        for (const x of values) {
          if (typeof x !== 'string')
            throw new OperandTypeError(`operand 1 values must be string, array[string], or set[string] but got ${typeName(x)}`);
          parts.push(`${queryEscape(k)}=${queryEscape(x)}`);
        }
      }
      return parts.join('&');
    },
  },
  {
    name: 'urlquery.decode_object',
    decl: T.fn([T.string], T.objectOf(T.string, T.arrayOf(T.string))),
    impl: ([s]) => {
      const out = new Map<string, string[]>();
      for (const part of str(s!).split(/[&]/)) {
        if (part === '') continue;
        if (part.includes(';')) throw new BuiltinError('invalid semicolon separator in query');
        const eq = part.indexOf('=');
        const key = queryUnescape(eq < 0 ? part : part.slice(0, eq));
        const value = eq < 0 ? '' : queryUnescape(part.slice(eq + 1));
        const list = out.get(key) ?? [];
        list.push(value);
        out.set(key, list);
      }
      const o = new RegoObject();
      for (const [k, v] of out) o.set(k, v);
      return o;
    },
  },
  {
    name: 'json.marshal',
    decl: T.fn([T.any], T.string),
    impl: ([v]) => stringifyJSON(v!, undefined, { escapeHTML: true }),
  },
  {
    name: 'json.marshal_with_options',
    decl: T.fn(
      [T.any, T.record({ pretty: T.boolean, indent: T.string, prefix: T.string }, { key: T.string, value: T.any })],
      T.string,
    ),
    impl: ([v, opts]) => marshalWithOptions(v!, obj(opts!)),
  },
  { name: 'json.unmarshal', decl: T.fn([T.string], T.any), impl: ([s]) => unmarshalJSON(str(s!)) },
  { name: 'json.is_valid', decl: T.fn([T.string], T.boolean), impl: ([s]) => isValidJSON(str(s!)) },
  { name: 'yaml.marshal', decl: T.fn([T.any], T.string), impl: ([v]) => marshalYAML(v!) },
  { name: 'yaml.unmarshal', decl: T.fn([T.string], T.any), impl: ([s]) => parseYAML(str(s!)) },
  {
    name: 'yaml.is_valid',
    decl: T.fn([T.string], T.boolean),
    impl: ([s]) => {
      try {
        parseYAML(str(s!));
        return true;
      } catch {
        return false;
      }
    },
  },
);

function quoteRune(ch: string): string {
  if (ch === "'") return "'\\''";
  return `'${ch}'`;
}

/** base64url without its padding gets it back, as OPA repairs it (RFC 7515 appendix C). */
export function padBase64url(text: string): string {
  if (text.endsWith('=')) return text;
  switch (text.length % 4) {
    case 0:
      return text;
    case 2:
      return text + '==';
    case 3:
      return text + '=';
    default:
      throw new BuiltinError(`illegal base64url string: ${text}`);
  }
}
