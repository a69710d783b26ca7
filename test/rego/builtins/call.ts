import assert from 'node:assert/strict';
import {
  builtins,
  createBuiltinContext,
  invoke,
  invokeRelation,
  type BuiltinContextOptions,
} from '../../../src/rego/builtins/index.js';
import { fromJSON, parseJSON, stringifyJSON, RegoObject, RegoSet, BigNum, type Value } from '../../../src/rego/value/index.js';

/** Test helper: calls a builtin through the registry with JSON-ish arguments. */
export function call(name: string, args: unknown[], options: BuiltinContextOptions = {}): Value | undefined {
  const b = builtins.get(name);
  assert.ok(b, `builtin ${name} is registered`);
  return invoke(b, args.map(toValue), createBuiltinContext(options));
}

export function relation(name: string, args: unknown[]): Value[] {
  return invokeRelation(builtins.get(name)!, args.map(toValue), createBuiltinContext());
}

function toValue(a: unknown): Value {
  if (a instanceof RegoSet || a instanceof RegoObject || a instanceof BigNum) return a;
  return fromJSON(a);
}

/** The JSON text of a builtin's result (sets as sorted arrays), or "undefined". */
export function json(name: string, ...args: unknown[]): string {
  const v = call(name, args);
  return v === undefined ? 'undefined' : stringifyJSON(v);
}

/** Asserts that the call fails with the given OPA code and exact message. */
export function fails(name: string, args: unknown[], code: string, message: string): void {
  assert.throws(
    () => call(name, args),
    (e: unknown) => {
      const err = e as { code?: string; message?: string };
      assert.equal(err.message, message);
      assert.equal(err.code, code);
      return true;
    },
  );
}

export const set = (...members: unknown[]) => new RegoSet(members.map(toValue));
export { parseJSON };
