/**
 * The three patch formats of a PATCH request (kube.md §7.6): RFC 6902 JSON Patch (through
 * fast-json-patch), RFC 7386 merge patch, and strategic merge patch with the merge keys each kind
 * declares (`ResourceType.mergeKeys`) plus the metadata keys every object has.
 */
import jsonpatch from 'fast-json-patch';
import { badRequest, StatusError } from '../errors.js';
import { clone, isPlainObject, type JsonObject } from '../object.js';

export function applyJsonPatch(target: JsonObject, patch: unknown): JsonObject {
  if (!Array.isArray(patch)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  const document = clone(target);
  try {
    const validationError = jsonpatch.validate(patch as jsonpatch.Operation[], document);
    if (validationError) throw validationError;
    return jsonpatch.applyPatch(document, patch as jsonpatch.Operation[], false, true).newDocument as JsonObject;
  } catch (error) {
    if (error instanceof StatusError) throw error;
    const name = (error as { name?: string }).name;
    if (name === 'TEST_OPERATION_FAILED') {
      throw new StatusError(422, 'Invalid', 'the server rejected our request due to an error in our request');
    }
    throw new StatusError(422, 'Invalid', `the server rejected our request due to an error in our request: ${(error as Error).message.split('\n')[0]}`);
  }
}

export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return clone(patch);
  const result: JsonObject = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}

/** Merge keys of fields every object has (ObjectMeta). */
const METADATA_MERGE_KEYS: Readonly<Record<string, string>> = {
  'metadata.ownerReferences': 'uid',
  'metadata.finalizers': '',
};

const DIRECTIVE = '$patch';

/**
 * Strategic merge patch. `mergeKeys` maps a field path (list elements as `[]`) to the list's merge
 * key (`''`: a set of primitives). Lists without an entry are replaced, as upstream does for
 * fields without a patch strategy.
 */
export function applyStrategicMergePatch(target: JsonObject, patch: unknown, mergeKeys: Readonly<Record<string, string>> = {}): JsonObject {
  if (!isPlainObject(patch)) throw badRequest('json: cannot unmarshal array into Go value of type map[string]interface {}');
  const keys = { ...METADATA_MERGE_KEYS, ...mergeKeys };
  return (mergeMap(clone(target), patch, '', keys) ?? {}) as JsonObject;
}

function childPath(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

function mergeMap(original: unknown, patch: JsonObject, path: string, keys: Readonly<Record<string, string>>): JsonObject | undefined {
  const directive = patch[DIRECTIVE];
  if (directive === 'delete') return undefined;
  if (directive === 'replace') return stripDirectives(omit(patch, DIRECTIVE)) as JsonObject;
  if (directive !== undefined && directive !== 'merge') throw badRequest(`Unknown patch type: ${String(directive)}`);
  const result: JsonObject = isPlainObject(original) ? { ...original } : {};
  const retain = patch.$retainKeys;
  if (Array.isArray(retain)) for (const key of Object.keys(result)) if (!retain.includes(key)) delete result[key];
  const orders: Array<[string, unknown[]]> = [];
  for (const [key, value] of Object.entries(patch)) {
    if (key === DIRECTIVE || key === '$retainKeys') continue;
    if (key.startsWith('$setElementOrder/')) {
      if (Array.isArray(value)) orders.push([key.slice('$setElementOrder/'.length), value]);
      continue;
    }
    if (key.startsWith('$deleteFromPrimitiveList/')) {
      const list = key.slice('$deleteFromPrimitiveList/'.length);
      if (Array.isArray(result[list]) && Array.isArray(value)) result[list] = (result[list] as unknown[]).filter((v) => !value.includes(v));
      continue;
    }
    const here = childPath(path, key);
    if (value === null) {
      delete result[key];
    } else if (Array.isArray(value)) {
      const mergeKey = keys[here];
      result[key] = mergeKey === undefined ? stripDirectives(value) : mergeList(result[key], value, mergeKey, here, keys);
    } else if (isPlainObject(value)) {
      const merged = mergeMap(result[key], value, here, keys);
      if (merged === undefined) delete result[key];
      else result[key] = merged;
    } else {
      result[key] = value;
    }
  }
  for (const [list, order] of orders) {
    if (Array.isArray(result[list])) result[list] = reorder(result[list] as unknown[], order, keys[childPath(path, list)] ?? '');
  }
  return result;
}

function mergeList(original: unknown, patch: unknown[], mergeKey: string, path: string, keys: Readonly<Record<string, string>>): unknown[] {
  const current = Array.isArray(original) ? [...original] : [];
  if (patch.some((p) => isPlainObject(p) && p[DIRECTIVE] === 'replace')) {
    return stripDirectives(patch.filter((p) => !(isPlainObject(p) && p[DIRECTIVE] === 'replace'))) as unknown[];
  }
  if (mergeKey === '') {
    for (const item of patch) if (!current.some((c) => c === item)) current.push(item);
    return current;
  }
  for (const item of patch) {
    if (!isPlainObject(item)) {
      current.push(item);
      continue;
    }
    const index = current.findIndex((c) => isPlainObject(c) && c[mergeKey] === item[mergeKey]);
    if (item[DIRECTIVE] === 'delete') {
      if (index >= 0) current.splice(index, 1);
      continue;
    }
    if (index >= 0) current[index] = mergeMap(current[index], item, `${path}[]`, keys);
    else current.push(mergeMap(undefined, item, `${path}[]`, keys));
  }
  return current.filter((c) => c !== undefined);
}

/** `$setElementOrder`: listed elements first in the given order, the rest after, in their order. */
function reorder(list: unknown[], order: unknown[], mergeKey: string): unknown[] {
  const keyOf = (item: unknown) => (mergeKey && isPlainObject(item) ? item[mergeKey] : item);
  const wanted = order.map(keyOf);
  const ordered = wanted.flatMap((k) => list.filter((item) => keyOf(item) === k));
  return [...ordered, ...list.filter((item) => !wanted.includes(keyOf(item)))];
}

function stripDirectives(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripDirectives);
  if (!isPlainObject(value)) return value;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === DIRECTIVE || k === '$retainKeys' || k.startsWith('$setElementOrder/') || k.startsWith('$deleteFromPrimitiveList/')) continue;
    out[k] = stripDirectives(v);
  }
  return out;
}

function omit(object: JsonObject, key: string): JsonObject {
  const { [key]: _dropped, ...rest } = object;
  return rest;
}
