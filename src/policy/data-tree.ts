/**
 * The base documents (`data`) as an immutable JSON tree with OPA's storage semantics: add,
 * remove and replace at a path (RFC 6902 flavoured: `-` appends to an array), `makeDir` for PUT's
 * `mkdir -p`. Every write returns a new root that shares unchanged subtrees with the old one, so a
 * reader holding the old root is never disturbed.
 */

export type Json = null | boolean | number | bigint | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export type StoreErrorKind = 'not_found' | 'write_conflict' | 'invalid_patch';

/** A storage failure, with OPA's storage error text (`storage_not_found_error: …`). */
export class StoreError extends Error {
  constructor(
    readonly kind: StoreErrorKind,
    detail: string,
  ) {
    super(`storage_${kind}_error: ${detail}`);
    this.name = 'StoreError';
  }
}

export type PatchOp = 'add' | 'remove' | 'replace';

/** `/a/b/0` for ['a','b','0']; `/` for the root. */
export function pathString(path: readonly string[]): string {
  return '/' + path.map(encodeURIComponent).join('/');
}

export function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The value at `path`, or undefined. Array indices are decimal strings. */
export function readPath(root: Json, path: readonly string[]): Json | undefined {
  let current: Json | undefined = root;
  for (const key of path) {
    if (Array.isArray(current)) {
      const index = arrayIndex(key, current.length);
      current = index === undefined ? undefined : current[index];
    }
    else if (isObject(current)) current = Object.hasOwn(current, key) ? current[key] : undefined;
    else return undefined;
    if (current === undefined) return undefined;
  }
  return current;
}

/** Create missing objects along `path` (PUT's `mkdir -p`); a non-object on the way is a write conflict. */
export function makeDir(root: JsonObject, path: readonly string[]): JsonObject {
  if (path.length === 0) return root;
  const [head, ...rest] = path as [string, ...string[]];
  const child = Object.hasOwn(root, head) ? root[head] : undefined;
  if (child === undefined) return { ...root, [head]: makeDir({}, rest) };
  if (!isObject(child)) throw new StoreError('write_conflict', pathString(path));
  const made = makeDir(child, rest);
  return made === child ? root : { ...root, [head]: made };
}

/** Apply one storage operation at `path`, returning the new root. */
export function write(root: JsonObject, op: PatchOp, path: readonly string[], value?: Json): JsonObject {
  if (path.length === 0) {
    if (op === 'remove') throw new StoreError('invalid_patch', 'document root cannot be removed');
    if (!isObject(value)) throw new StoreError('invalid_patch', 'root must be object');
    return value;
  }
  return update(root, path, 0, op, value, path) as JsonObject;
}

function update(node: Json, path: readonly string[], depth: number, op: PatchOp, value: Json | undefined, full: readonly string[]): Json {
  const key = path[depth]!;
  const last = depth === path.length - 1;
  if (isObject(node)) {
    const exists = Object.hasOwn(node, key);
    if (!last) {
      if (!exists) throw notFound(full, depth);
      return { ...node, [key]: update(node[key]!, path, depth + 1, op, value, full) };
    }
    if (op === 'add') return { ...node, [key]: value! };
    if (!exists) throw notFound(full, depth);
    if (op === 'replace') return { ...node, [key]: value! };
    const { [key]: _removed, ...rest } = node;
    return rest;
  }
  if (Array.isArray(node)) {
    if (last && op === 'add') {
      const index = key === '-' ? node.length : arrayIndex(key, node.length + 1);
      if (index === undefined) throw new StoreError('not_found', `${pathString(full)}: array index out of range`);
      return [...node.slice(0, index), value!, ...node.slice(index)];
    }
    const index = arrayIndex(key, node.length);
    if (index === undefined) throw notFound(full, depth);
    if (!last) return node.map((item, i) => (i === index ? update(item, path, depth + 1, op, value, full) : item));
    if (op === 'replace') return node.map((item, i) => (i === index ? value! : item));
    return node.filter((_, i) => i !== index);
  }
  throw notFound(full, depth);
}

function notFound(full: readonly string[], _depth: number): StoreError {
  return new StoreError('not_found', `${pathString(full)}: document does not exist`);
}

function arrayIndex(key: string, length: number): number | undefined {
  if (!/^(0|[1-9]\d*)$/.test(key)) return undefined;
  const index = Number(key);
  return index < length ? index : undefined;
}
