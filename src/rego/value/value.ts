import {
  BigNum,
  compareNumbers,
  fromBigInt,
  fromJSNumber,
  numberText,
  parseNumber,
  type RegoNumber,
} from './number.js';

/**
 * A Rego value. Plain JS where possible: `null`, `boolean`, `string`, `number` (see number.ts for
 * `BigNum`), arrays are frozen-by-contract JS arrays; objects and sets are `RegoObject` / `RegoSet`,
 * whose keys/members may be any value. JS `undefined` is Rego's *undefined* and is never a Value.
 *
 * Values are immutable once shared. `RegoObject.set` / `RegoSet.add` exist for the code that
 * builds a fresh value (builtins, comprehensions, rule evaluation) and must not be called after the
 * value has been handed to anyone else.
 */
export type Value = null | boolean | RegoNumber | string | ArrayValue | RegoObject | RegoSet;
export type ArrayValue = readonly Value[];

export type TypeName = 'null' | 'boolean' | 'number' | 'string' | 'array' | 'object' | 'set';

/** The type name OPA uses in errors and `type_name`. */
export function typeName(v: Value): TypeName {
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    default:
      if (v === null) return 'null';
      if (Array.isArray(v)) return 'array';
      if (v instanceof RegoObject) return 'object';
      if (v instanceof RegoSet) return 'set';
      return 'number'; // BigNum
  }
}

// ---- canonical keys --------------------------------------------------------------------------

/**
 * The canonical key of a value: equal values (structurally, numbers by value) have equal keys and
 * different values different keys. A string that does not start with NUL is its own key, so the
 * common lookup by string costs nothing; composite keys are computed once and cached.
 */
export function keyOf(v: Value): string {
  if (typeof v === 'string') return v.length === 0 || v.charCodeAt(0) !== 0 ? v : '\u0000s' + v;
  return '\u0000' + serial(v);
}

const arraySerials = new WeakMap<ArrayValue, string>();

/** An injective text for any value (canonical member order for sets and objects). */
function serial(v: Value): string {
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      return String(v);
    case 'boolean':
      return v ? 't' : 'f';
  }
  if (v === null) return 'z';
  if (Array.isArray(v)) {
    // Short arrays (tuples such as [user, role]) are cheaper to serialise than to cache.
    if (v.length <= 4) {
      let s = '[';
      for (let i = 0; i < v.length; i++) s += (i ? ',' : '') + serial(v[i]!);
      return s + ']';
    }
    let s = arraySerials.get(v);
    if (s === undefined) {
      s = '[' + v.map(serial).join(',') + ']';
      arraySerials.set(v, s);
    }
    return s;
  }
  if (v instanceof RegoObject || v instanceof RegoSet) return v.serial();
  const n = v as BigNum;
  return `${n.mant}e${n.exp}`;
}

// ---- objects and sets --------------------------------------------------------------------------

/** A Rego object: any value as key, lookup by canonical key, iteration in OPA's sorted key order. */
export class RegoObject {
  /** canonical key → value */
  readonly #values = new Map<string, Value>();
  /** canonical key → key, only for keys that are not their own canonical key (non-strings) */
  #keys: Map<string, Value> | undefined;
  #sorted: ReadonlyArray<readonly [Value, Value]> | undefined;
  #serial: string | undefined;

  constructor(entries?: Iterable<readonly [Value, Value]>) {
    if (entries) for (const [k, v] of entries) this.set(k, v);
  }

  /** Builds an object with string keys from a JS record (values already Rego values). */
  static fromRecord(record: Record<string, Value>): RegoObject {
    const o = new RegoObject();
    for (const k of Object.keys(record)) o.set(k, record[k]!);
    return o;
  }

  get size(): number {
    return this.#values.size;
  }

  get(key: Value): Value | undefined {
    return this.#values.get(keyOf(key));
  }

  has(key: Value): boolean {
    return this.#values.has(keyOf(key));
  }

  /** Building only (see Value). Replaces an existing entry with an equal key. */
  set(key: Value, value: Value): this {
    const k = keyOf(key);
    if (k !== key) (this.#keys ??= new Map()).set(k, key);
    this.#values.set(k, value);
    this.#sorted = undefined;
    this.#serial = undefined;
    return this;
  }

  /** Building only (see Value). */
  delete(key: Value): this {
    const k = keyOf(key);
    this.#values.delete(k);
    this.#keys?.delete(k);
    this.#sorted = undefined;
    this.#serial = undefined;
    return this;
  }

  /** Entries sorted by key in OPA's order; cached. */
  entries(): ReadonlyArray<readonly [Value, Value]> {
    if (this.#sorted === undefined) {
      const out: [Value, Value][] = [];
      const keys = this.#keys;
      for (const [k, v] of this.#values) out.push([keys !== undefined && keys.has(k) ? keys.get(k)! : k, v]);
      out.sort(keys === undefined ? compareStringEntries : (a, b) => compare(a[0], b[0]));
      this.#sorted = out;
    }
    return this.#sorted;
  }

  keys(): Value[] {
    return this.entries().map((e) => e[0]);
  }

  values(): Value[] {
    return this.entries().map((e) => e[1]);
  }

  [Symbol.iterator](): Iterator<readonly [Value, Value]> {
    return this.entries()[Symbol.iterator]();
  }

  /** A mutable copy, for builtins that derive a new object. */
  copy(): RegoObject {
    const o = new RegoObject();
    for (const [k, v] of this.entries()) o.set(k, v);
    return o;
  }

  /** @internal canonical serial, cached */
  serial(): string {
    if (this.#serial === undefined) {
      const parts: string[] = [];
      const keys = this.#keys;
      for (const [k, v] of this.#values) parts.push(serial(keys !== undefined && keys.has(k) ? keys.get(k)! : k) + ':' + serial(v));
      parts.sort();
      this.#serial = '{' + parts.join(',') + '}';
    }
    return this.#serial;
  }
}

/** A Rego set: structural membership by canonical key, iteration in OPA's sorted order. */
export class RegoSet {
  readonly #members = new Map<string, Value>();
  #sorted: readonly Value[] | undefined;
  #serial: string | undefined;

  constructor(members?: Iterable<Value>) {
    if (members) for (const m of members) this.add(m);
  }

  get size(): number {
    return this.#members.size;
  }

  has(v: Value): boolean {
    return this.#members.has(keyOf(v));
  }

  /** Building only (see Value). */
  add(v: Value): this {
    const k = keyOf(v);
    if (!this.#members.has(k)) {
      this.#members.set(k, v);
      this.#sorted = undefined;
      this.#serial = undefined;
    }
    return this;
  }

  /** Building only (see Value). */
  delete(v: Value): this {
    if (this.#members.delete(keyOf(v))) {
      this.#sorted = undefined;
      this.#serial = undefined;
    }
    return this;
  }

  /** Members in OPA's sorted order; cached. */
  values(): readonly Value[] {
    if (this.#sorted === undefined) this.#sorted = [...this.#members.values()].sort(compare);
    return this.#sorted;
  }

  [Symbol.iterator](): Iterator<Value> {
    return this.values()[Symbol.iterator]();
  }

  /** @internal canonical serial, cached */
  serial(): string {
    if (this.#serial === undefined) {
      const parts = [...this.#members.values()].map(serial).sort();
      this.#serial = '<' + parts.join(',') + '>';
    }
    return this.#serial;
  }
}

function compareStringEntries(a: readonly [Value, Value], b: readonly [Value, Value]): number {
  return compareStrings(a[0] as string, b[0] as string);
}

// ---- equality and order ------------------------------------------------------------------------

/** Structural equality; numbers by value. */
export function equals(a: Value, b: Value): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!equals(a[i]!, b[i]!)) return false;
    return true;
  }
  if (a instanceof RegoObject) {
    if (!(b instanceof RegoObject) || a.size !== b.size) return false;
    for (const [k, v] of a.entries()) {
      const w = b.get(k);
      if (w === undefined || !equals(v, w)) return false;
    }
    return true;
  }
  if (a instanceof RegoSet) {
    if (!(b instanceof RegoSet) || a.size !== b.size) return false;
    for (const m of a.values()) if (!b.has(m)) return false;
    return true;
  }
  if (a instanceof BigNum && b instanceof BigNum) return a.mant === b.mant && a.exp === b.exp;
  return false;
}

const RANK: Record<TypeName, number> = { null: 0, boolean: 1, number: 2, string: 3, array: 4, object: 5, set: 6 };

/** OPA's total order: null < boolean < number < string < array < object < set, then by content. */
export function compare(a: Value, b: Value): number {
  if (a === b) return 0;
  const ta = typeName(a);
  const tb = typeName(b);
  if (ta !== tb) return RANK[ta] < RANK[tb] ? -1 : 1;
  switch (ta) {
    case 'null':
      return 0;
    case 'boolean':
      return a === false ? -1 : 1;
    case 'number':
      return compareNumbers(a as RegoNumber, b as RegoNumber);
    case 'string':
      return compareStrings(a as string, b as string);
    case 'array': {
      const x = a as ArrayValue;
      const y = b as ArrayValue;
      const n = Math.min(x.length, y.length);
      for (let i = 0; i < n; i++) {
        const c = compare(x[i]!, y[i]!);
        if (c !== 0) return c;
      }
      return x.length < y.length ? -1 : x.length > y.length ? 1 : 0;
    }
    case 'object': {
      const x = (a as RegoObject).entries();
      const y = (b as RegoObject).entries();
      const n = Math.min(x.length, y.length);
      for (let i = 0; i < n; i++) {
        const c = compare(x[i]![0], y[i]![0]) || compare(x[i]![1], y[i]![1]);
        if (c !== 0) return c;
      }
      return x.length < y.length ? -1 : x.length > y.length ? 1 : 0;
    }
    case 'set': {
      const x = (a as RegoSet).values();
      const y = (b as RegoSet).values();
      const n = Math.min(x.length, y.length);
      for (let i = 0; i < n; i++) {
        const c = compare(x[i]!, y[i]!);
        if (c !== 0) return c;
      }
      return x.length < y.length ? -1 : x.length > y.length ? 1 : 0;
    }
  }
}

/** Strings ordered by code point (= UTF-8 byte order, as Go compares them). */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      const sx = x >= 0xd800 && x <= 0xdfff;
      const sy = y >= 0xd800 && y <= 0xdfff;
      if (sx !== sy) return sx ? 1 : -1;
      return x < y ? -1 : 1;
    }
  }
  return a.length < b.length ? -1 : 1;
}

// ---- JSON --------------------------------------------------------------------------------------

/**
 * Converts a JS JSON-like value (as from JSON.parse or a YAML parser) to a Rego value.
 * Accepts `bigint` for exact big integers and passes Rego values (RegoObject, RegoSet, BigNum)
 * through. Throws TypeError for what JSON cannot hold (undefined, functions, NaN, Infinity).
 */
export function fromJSON(x: unknown): Value {
  switch (typeof x) {
    case 'string':
    case 'boolean':
      return x;
    case 'number':
      if (!Number.isFinite(x)) throw new TypeError(`not a JSON number: ${x}`);
      return fromJSNumber(x);
    case 'bigint':
      return fromBigInt(x);
    case 'object':
      if (x === null) return null;
      if (Array.isArray(x)) return x.map(fromJSON);
      if (x instanceof RegoObject || x instanceof RegoSet || x instanceof BigNum) return x;
      if (x instanceof Map) {
        const o = new RegoObject();
        for (const [k, v] of x) o.set(fromJSON(k), fromJSON(v));
        return o;
      }
      if (x instanceof Set) return new RegoSet([...x].map(fromJSON));
      {
        const o = new RegoObject();
        const rec = x as Record<string, unknown>;
        for (const k of Object.keys(rec)) {
          const v = rec[k];
          if (v !== undefined) o.set(k, fromJSON(v));
        }
        return o;
      }
  }
  throw new TypeError(`not a JSON value: ${typeof x}`);
}

/**
 * Converts a Rego value to plain JS, as OPA renders values in JSON: sets become arrays in sorted
 * order, non-string object keys become their JSON text. Numbers beyond a double's precision are
 * approximated, unless `exactIntegers` asks for big integers as bigint; use `stringifyJSON` for
 * exact text.
 */
export function toJSON(v: Value, options: { exactIntegers?: boolean } = {}): unknown {
  switch (typeof v) {
    case 'string':
    case 'number':
    case 'boolean':
      return v;
  }
  if (v === null) return null;
  if (Array.isArray(v)) return v.map((w) => toJSON(w, options));
  if (v instanceof RegoSet) return v.values().map((w) => toJSON(w, options));
  if (v instanceof RegoObject) {
    const out: Record<string, unknown> = {};
    for (const [k, w] of v.entries()) out[typeof k === 'string' ? k : stringifyJSON(k)] = toJSON(w, options);
    return out;
  }
  const n = v as BigNum;
  if (options.exactIntegers && n.exp >= 0) return n.mant * 10n ** BigInt(n.exp);
  return Number(n.toString());
}

export interface StringifyOptions {
  /** Escape `<`, `>`, `&`, U+2028 and U+2029 as Go's encoding/json does (OPA's HTTP output). */
  escapeHTML?: boolean;
  /** Text starting every line after the first when indenting (Go's MarshalIndent prefix). */
  prefix?: string;
}

const GO_ESCAPES: Record<string, string> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

function quoteJSON(s: string, escapeHTML: boolean): string {
  const q = JSON.stringify(s);
  return escapeHTML ? q.replace(/[<>&\u2028\u2029]/g, (c) => GO_ESCAPES[c]!) : q;
}

/**
 * Exact JSON text of a value. Object keys in sorted order (as OPA's output), sets as sorted
 * arrays, non-string keys as their JSON text. `indent` pretty-prints like JSON.stringify.
 */
export function stringifyJSON(v: Value, indent?: number | string, options: StringifyOptions = {}): string {
  const step = typeof indent === 'number' ? ' '.repeat(indent) : (indent ?? '');
  const escapeHTML = options.escapeHTML ?? false;
  const base = options.prefix ?? '';
  const out: string[] = [];
  write(v, base);
  return out.join('');

  function write(x: Value, pad: string): void {
    switch (typeof x) {
      case 'string':
        out.push(quoteJSON(x, escapeHTML));
        return;
      case 'boolean':
        out.push(x ? 'true' : 'false');
        return;
      case 'number':
        out.push(numberText(x));
        return;
    }
    if (x === null) {
      out.push('null');
      return;
    }
    if (x instanceof BigNum) {
      out.push(numberText(x));
      return;
    }
    const inner = pad + step;
    const nl = step || base ? '\n' : '';
    if (Array.isArray(x) || x instanceof RegoSet) {
      const items: readonly Value[] = Array.isArray(x) ? x : (x as RegoSet).values();
      if (items.length === 0) {
        out.push('[]');
        return;
      }
      out.push('[' + nl);
      items.forEach((item, i) => {
        if (i > 0) out.push(',' + nl);
        out.push(inner);
        write(item, inner);
      });
      out.push(nl + pad + ']');
      return;
    }
    const obj = x as RegoObject;
    if (obj.size === 0) {
      out.push('{}');
      return;
    }
    const entries = obj.entries().map(([k, w]) => [typeof k === 'string' ? k : stringifyJSON(k, undefined, options), w] as const);
    if (obj.entries().some(([k]) => typeof k !== 'string')) entries.sort((a, b) => compareStrings(a[0], b[0]));
    out.push('{' + nl);
    entries.forEach(([k, w], i) => {
      if (i > 0) out.push(',' + nl);
      out.push(inner + quoteJSON(k, escapeHTML) + (nl ? ': ' : ':'));
      write(w, inner);
    });
    out.push(nl + pad + '}');
  }
}

/** Number-like tokens a double might not hold exactly (long digit runs, large exponents). */
const RISKY_NUMBER = /\d[\d.]{15,}|[eE][-+]?\d{3}/;

/**
 * Parses JSON text into a Rego value, keeping every number exact. Throws SyntaxError on bad input.
 */
export function parseJSON(text: string): Value {
  if (!RISKY_NUMBER.test(text)) return fromJSON(JSON.parse(text));
  return new ExactJSONParser(text).parseDocument();
}

class ExactJSONParser {
  private pos = 0;
  constructor(private readonly text: string) {}

  parseDocument(): Value {
    const v = this.value();
    this.ws();
    if (this.pos !== this.text.length) this.fail();
    return v;
  }

  private fail(): never {
    throw new SyntaxError(`Unexpected token in JSON at position ${this.pos}`);
  }

  private ws(): void {
    const t = this.text;
    while (this.pos < t.length) {
      const c = t.charCodeAt(this.pos);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.pos++;
      else break;
    }
  }

  private value(): Value {
    this.ws();
    const t = this.text;
    const c = t[this.pos];
    if (c === '{') {
      this.pos++;
      const o = new RegoObject();
      this.ws();
      if (t[this.pos] === '}') {
        this.pos++;
        return o;
      }
      for (;;) {
        this.ws();
        if (t[this.pos] !== '"') this.fail();
        const k = this.string();
        this.ws();
        if (t[this.pos++] !== ':') this.fail();
        o.set(k, this.value());
        this.ws();
        const d = t[this.pos++];
        if (d === '}') return o;
        if (d !== ',') this.fail();
      }
    }
    if (c === '[') {
      this.pos++;
      const a: Value[] = [];
      this.ws();
      if (t[this.pos] === ']') {
        this.pos++;
        return a;
      }
      for (;;) {
        a.push(this.value());
        this.ws();
        const d = t[this.pos++];
        if (d === ']') return a;
        if (d !== ',') this.fail();
      }
    }
    if (c === '"') return this.string();
    for (const [word, v] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (t.startsWith(word, this.pos)) {
        this.pos += word.length;
        return v;
      }
    }
    const m = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?/y;
    m.lastIndex = this.pos;
    const found = m.exec(t);
    if (!found || found[0] === '' || found[0] === '-') this.fail();
    this.pos += found[0].length;
    const n = parseNumber(found[0]);
    if (n === undefined) this.fail();
    return n;
  }

  private string(): string {
    const t = this.text;
    const start = this.pos;
    let i = start + 1;
    for (;;) {
      if (i >= t.length) this.fail();
      const c = t.charCodeAt(i);
      if (c === 0x22) break;
      if (c === 0x5c) i++;
      i++;
    }
    this.pos = i + 1;
    return JSON.parse(t.slice(start, i + 1)) as string;
  }
}
