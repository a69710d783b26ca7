import {
  RegoObject,
  RegoSet,
  typeName,
  num,
  type ArrayValue,
  type RegoNumber,
  type Value,
} from '../value/index.js';
import { OperandTypeError } from './registry.js';

/**
 * Operand accessors for builtin implementations. `invoke` has already checked each operand's
 * top-level kind against the declaration, so these narrow without re-checking; the checks they do
 * perform are the finer ones OPA reports (integers, element types).
 */

export const str = (v: Value): string => v as string;
export const numOf = (v: Value): RegoNumber => v as RegoNumber;
export const arr = (v: Value): ArrayValue => v as ArrayValue;
export const obj = (v: Value): RegoObject => v as RegoObject;
export const set = (v: Value): RegoSet => v as RegoSet;

/** Members of an array or set (in set order), or the values of an object. */
export function elements(v: Value): readonly Value[] {
  if (Array.isArray(v)) return v as ArrayValue;
  if (v instanceof RegoSet) return v.values();
  if (v instanceof RegoObject) return v.values();
  return [];
}

/** An integer operand as a JS safe integer; OPA's wording when it is not an integer. */
export function intOperand(v: Value, position: number): number {
  const n = v as RegoNumber;
  if (!num.isInteger(n)) throw new OperandTypeError(position, 'integer number', 'floating-point number');
  const i = num.toSafeInteger(n);
  if (i === undefined) throw new OperandTypeError(position, 'integer number', 'floating-point number');
  return i;
}

/** An integer operand as a bigint (any size). */
export function bigIntOperand(v: Value, position: number): bigint {
  const i = num.toBigInt(v as RegoNumber);
  if (i === undefined) throw new OperandTypeError(position, 'integer number', 'floating-point number');
  return i;
}

/** Strings of an array or set operand; `operand N must be array of strings but got array containing number`. */
export function stringElements(v: Value, position: number): string[] {
  const items = elements(v);
  for (const item of items) {
    if (typeof item !== 'string')
      throw new OperandTypeError(
        `operand ${position} must be ${typeName(v)} of strings but got ${typeName(v)} containing ${typeName(item)}`,
      );
  }
  return items as string[];
}

/** Number of Unicode code points (OPA counts runes). */
export function runeLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdbff || i + 1 >= s.length) n++;
    else {
      const d = s.charCodeAt(i + 1);
      n++;
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
  }
  return n;
}

export function runes(s: string): string[] {
  return Array.from(s);
}

/** A string-keyed object from a record of values. */
export function record(fields: Record<string, Value>): RegoObject {
  return RegoObject.fromRecord(fields);
}
