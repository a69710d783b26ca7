/**
 * Field schemas of a path table and the conversion of wire values to them. Conversion is as
 * forgiving as Vault's (weak decoding: `"5"` for an int, `"true"` for a bool, `"a,b"` for a comma
 * slice, `3600` or `"1h"` for a duration) and a value that cannot be converted is a 400.
 */
import { DurationError, parseDurationSeconds } from '../../common/duration.js';
import { InvalidRequestError } from '../errors.js';

export type FieldType =
  | 'string'
  /** A string, lower-cased. */
  | 'lowercase-string'
  | 'int'
  | 'bool'
  /** Seconds; accepts an integer or a Go duration string. */
  | 'duration'
  /** A JSON array of strings (a single string becomes a one-element list). */
  | 'string-slice'
  /** A JSON array or a comma-separated string; items trimmed, empties dropped. */
  | 'comma-string-slice'
  | 'comma-int-slice'
  /** A JSON object. */
  | 'map'
  /** A map of strings; also accepts a list of `key=value` strings. */
  | 'kv-pairs'
  /** Any JSON value, unconverted. */
  | 'raw';

export interface FieldSchema {
  readonly type: FieldType;
  readonly description?: string;
  /** Value when the field is absent; otherwise the type's zero value. */
  readonly default?: unknown;
  /** Only these values are accepted (strings). */
  readonly allowedValues?: readonly string[];
  /** Older name of the field, accepted as well (e.g. `policies` for `token_policies`). */
  readonly deprecatedAlias?: string;
}

export type FieldSchemas = Readonly<Record<string, FieldSchema>>;

const ZERO: Record<FieldType, () => unknown> = {
  string: () => '',
  'lowercase-string': () => '',
  int: () => 0,
  bool: () => false,
  duration: () => 0,
  'string-slice': () => [],
  'comma-string-slice': () => [],
  'comma-int-slice': () => [],
  map: () => ({}),
  'kv-pairs': () => ({}),
  raw: () => undefined,
};

class ConversionError extends Error {}

function toStringValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new ConversionError('expected a string');
}

function toInt(value: unknown): number {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string' && /^[-+]?\d+$/.test(value.trim())) return Number(value.trim());
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string' && value === '') return 0;
  throw new ConversionError('expected an integer');
}

const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False', '']);

/** Go's strconv.ParseBool (plus JSON booleans and 0/1 numbers). */
export function parseBool(value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number' && (value === 0 || value === 1)) return value === 1;
  if (typeof value === 'string' && TRUE.has(value)) return true;
  if (typeof value === 'string' && FALSE.has(value)) return false;
  throw new ConversionError('expected a boolean');
}

function toDuration(value: unknown): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) throw new ConversionError('expected a non-negative duration');
    return Math.floor(value);
  }
  if (typeof value === 'string') {
    if (value.trim() === '') return 0;
    try {
      const seconds = parseDurationSeconds(value);
      if (seconds < 0) throw new ConversionError('expected a non-negative duration');
      return seconds;
    } catch (error) {
      if (error instanceof DurationError) throw new ConversionError(`time: invalid duration ${JSON.stringify(value)}`);
      throw error;
    }
  }
  throw new ConversionError('expected a duration');
}

function toStringSlice(value: unknown, comma: boolean): string[] {
  if (value === null || value === undefined) return [];
  if (Array.isArray(value)) return value.map(toStringValue).map((s) => (comma ? s.trim() : s)).filter((s) => !comma || s !== '');
  if (typeof value === 'string') return comma ? value.split(',').map((s) => s.trim()).filter((s) => s !== '') : [value];
  if (typeof value === 'number' || typeof value === 'boolean') return [String(value)];
  throw new ConversionError('expected a list of strings');
}

function toMap(value: unknown): Record<string, unknown> {
  if (value === null || value === undefined || value === '') return {};
  if (typeof value === 'string') {
    try {
      return toMap(JSON.parse(value));
    } catch {
      throw new ConversionError('expected an object');
    }
  }
  if (typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  throw new ConversionError('expected an object');
}

function toKvPairs(value: unknown): Record<string, string> {
  if (Array.isArray(value)) {
    const out: Record<string, string> = {};
    for (const item of value) {
      const text = toStringValue(item);
      const eq = text.indexOf('=');
      if (eq <= 0) throw new ConversionError(`expected key=value, got ${JSON.stringify(text)}`);
      out[text.slice(0, eq)] = text.slice(eq + 1);
    }
    return out;
  }
  const map = toMap(value);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(map)) out[k] = toStringValue(v);
  return out;
}

export function convertField(name: string, schema: FieldSchema, value: unknown): unknown {
  try {
    let converted: unknown;
    switch (schema.type) {
      case 'string':
        converted = value === null ? '' : toStringValue(value);
        break;
      case 'lowercase-string':
        converted = value === null ? '' : toStringValue(value).toLowerCase();
        break;
      case 'int':
        converted = value === null ? 0 : toInt(value);
        break;
      case 'bool':
        converted = value === null ? false : parseBool(value);
        break;
      case 'duration':
        converted = value === null ? 0 : toDuration(value);
        break;
      case 'string-slice':
        converted = toStringSlice(value, false);
        break;
      case 'comma-string-slice':
        converted = toStringSlice(value, true);
        break;
      case 'comma-int-slice':
        converted = toStringSlice(value, true).map(toInt);
        break;
      case 'map':
        converted = toMap(value);
        break;
      case 'kv-pairs':
        converted = toKvPairs(value);
        break;
      case 'raw':
        converted = value;
        break;
    }
    if (schema.allowedValues && typeof converted === 'string' && !schema.allowedValues.includes(converted)) {
      throw new ConversionError(`must be one of ${schema.allowedValues.join(', ')}`);
    }
    return converted;
  } catch (error) {
    if (error instanceof ConversionError) {
      throw new InvalidRequestError(`error converting input ${describe(value)} for field ${JSON.stringify(name)}: ${error.message}`);
    }
    throw error;
  }
}

function describe(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * The request data of one call, converted against the path's schemas. Every provided, declared
 * field is converted up front (so a wrong type is a 400 before the handler runs); getters return
 * the default or the type's zero value for absent fields.
 */
export class FieldData {
  private readonly values = new Map<string, unknown>();

  constructor(
    readonly schemas: FieldSchemas,
    readonly raw: Readonly<Record<string, unknown>>,
  ) {
    for (const [name, schema] of Object.entries(schemas)) {
      let value: unknown = raw[name];
      if (value === undefined && schema.deprecatedAlias !== undefined) value = raw[schema.deprecatedAlias];
      if (value !== undefined) this.values.set(name, convertField(name, schema, value));
    }
  }

  /** Names in the raw data that no schema (or alias) declares. */
  unknownFields(): string[] {
    const known = new Set<string>();
    for (const [name, schema] of Object.entries(this.schemas)) {
      known.add(name);
      if (schema.deprecatedAlias) known.add(schema.deprecatedAlias);
    }
    return Object.keys(this.raw).filter((k) => !known.has(k)).sort();
  }

  /** Whether the field (or its deprecated alias) was provided. */
  has(name: string): boolean {
    return this.values.has(name);
  }

  /** Whether the field was provided under its deprecated alias (and not under its name). */
  usedAlias(name: string): boolean {
    const alias = this.schemas[name]?.deprecatedAlias;
    return alias !== undefined && this.raw[name] === undefined && this.raw[alias] !== undefined;
  }

  get(name: string): unknown {
    if (this.values.has(name)) return this.values.get(name);
    const schema = this.schemas[name];
    if (!schema) throw new Error(`field ${name} is not declared`);
    if (schema.default !== undefined) return schema.default;
    return ZERO[schema.type]();
  }

  string(name: string): string {
    return this.get(name) as string;
  }
  int(name: string): number {
    return this.get(name) as number;
  }
  bool(name: string): boolean {
    return this.get(name) as boolean;
  }
  /** Seconds. */
  duration(name: string): number {
    return this.get(name) as number;
  }
  strings(name: string): string[] {
    return [...(this.get(name) as string[])];
  }
  ints(name: string): number[] {
    return [...(this.get(name) as number[])];
  }
  map(name: string): Record<string, unknown> {
    return this.get(name) as Record<string, unknown>;
  }
  pairs(name: string): Record<string, string> {
    return this.get(name) as Record<string, string>;
  }
}
