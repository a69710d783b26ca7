import { RegoObject, RegoSet, equals, typeName, type ArrayValue, type Value } from '../value/index.js';
import { OperandTypeError, defineBuiltins } from './registry.js';
import { arr, elements, obj } from './operands.js';
import { T, anyArray, anyObject } from './types.js';

/**
 * `json.filter`, `json.remove` (paths as `a/b/c` JSON-pointer strings or arrays of segments) and
 * `json.patch` (RFC 6902 over Rego values, sets included).
 */

/** One path: a `/`-separated string (with `~1`, `~0` escapes) or an array of segments. */
function parsePath(p: Value): Value[] {
  if (typeof p === 'string') {
    if (p === '') return [];
    return p
      .replace(/^\/+/, '')
      .split('/')
      .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'));
  }
  if (Array.isArray(p)) return [...(p as ArrayValue)];
  throw new OperandTypeError(
    `operand 2 must be one of {set, array} containing string paths or array of path segments but got ${typeName(p)}`,
  );
}

function pathsOf(v: Value): Value[][] {
  if (Array.isArray(v) || v instanceof RegoSet) return elements(v).map(parsePath);
  throw new OperandTypeError(2, ['set', 'array'], v);
}

/** The tree of paths: nested objects whose leaves are null (a shorter path wins over longer ones). */
function pathTree(paths: readonly Value[][]): RegoObject {
  const root = new RegoObject();
  for (const path of paths) {
    if (path.length === 0) continue;
    let node = root;
    let done = false;
    for (let i = 0; i < path.length - 1 && !done; i++) {
      const child = node.get(path[i]!);
      if (child === undefined) {
        const next = new RegoObject();
        node.set(path[i]!, next);
        node = next;
      } else if (child === null) done = true;
      else node = child as RegoObject;
    }
    if (!done) node.set(path[path.length - 1]!, null);
  }
  return root;
}

function filterValue(v: Value, filter: Value): Value {
  if (filter === null) return v;
  const f = filter as RegoObject;
  if (Array.isArray(v)) {
    const out: Value[] = [];
    (v as ArrayValue).forEach((x, i) => {
      const sub = f.get(String(i));
      if (sub !== undefined) out.push(filterValue(x, sub));
    });
    return out;
  }
  if (v instanceof RegoSet) {
    const out = new RegoSet();
    for (const m of v.values()) {
      const sub = f.get(m);
      if (sub !== undefined) out.add(filterValue(m, sub));
    }
    return out;
  }
  if (v instanceof RegoObject) {
    const out = new RegoObject();
    const [small, other] = v.size < f.size ? [v, f] : [f, v];
    for (const k of small.keys()) if (other.has(k)) out.set(k, filterValue(v.get(k)!, f.get(k)!));
    return out;
  }
  return v;
}

function removeValue(v: Value, filter: Value | undefined): Value | undefined {
  if (filter === undefined) return v;
  if (filter === null) return undefined;
  const f = filter as RegoObject;
  if (v instanceof RegoObject) {
    const out = new RegoObject();
    for (const [k, x] of v.entries()) {
      const kept = removeValue(x, f.get(k));
      if (kept !== undefined) out.set(k, kept);
    }
    return out;
  }
  if (v instanceof RegoSet) {
    const out = new RegoSet();
    for (const m of v.values()) {
      const kept = removeValue(m, f.get(m));
      if (kept !== undefined) out.add(kept);
    }
    return out;
  }
  if (Array.isArray(v)) {
    const out: Value[] = [];
    (v as ArrayValue).forEach((x, i) => {
      const kept = removeValue(x, f.get(String(i)));
      if (kept !== undefined) out.push(kept);
    });
    return out;
  }
  return v;
}

// ---- json.patch ---------------------------------------------------------------------------------

class PatchFailure extends Error {}

function patchPath(v: Value | undefined, field: string): Value[] {
  if (v === undefined) throw new PatchFailure(`missing ${field}`);
  if (typeof v === 'string') {
    if (v === '') return [];
    if (!v.startsWith('/')) throw new PatchFailure('invalid path');
    return v
      .slice(1)
      .split('/')
      .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'));
  }
  if (Array.isArray(v)) return [...(v as ArrayValue)];
  throw new PatchFailure('invalid path');
}

function arrayIndex(seg: Value, length: number, allowEnd: boolean): number {
  if (seg === '-' && allowEnd) return length;
  const n = typeof seg === 'string' && /^(0|[1-9]\d*)$/.test(seg) ? Number(seg) : typeof seg === 'number' ? seg : NaN;
  if (!Number.isInteger(n) || n < 0 || n > length || (!allowEnd && n === length)) throw new PatchFailure('bad index');
  return n;
}

function getAt(doc: Value, path: readonly Value[]): Value {
  let cur = doc;
  for (const seg of path) {
    if (cur instanceof RegoObject) {
      const next = cur.get(seg);
      if (next === undefined) throw new PatchFailure('missing');
      cur = next;
    } else if (Array.isArray(cur)) cur = (cur as ArrayValue)[arrayIndex(seg, cur.length, false)]!;
    else if (cur instanceof RegoSet) {
      if (!cur.has(seg)) throw new PatchFailure('missing');
      cur = seg;
    } else throw new PatchFailure('missing');
  }
  return cur;
}

/** Returns a copy of `doc` with `fn` applied to the parent container of `path`'s last segment. */
function updateAt(doc: Value, path: readonly Value[], fn: (parent: Value, key: Value) => Value): Value {
  if (path.length === 0) throw new PatchFailure('root');
  const [head, ...rest] = path;
  if (rest.length === 0) return fn(doc, head!);
  if (doc instanceof RegoObject) {
    const child = doc.get(head!);
    if (child === undefined) throw new PatchFailure('missing');
    return doc.copy().set(head!, updateAt(child, rest, fn));
  }
  if (Array.isArray(doc)) {
    const i = arrayIndex(head!, doc.length, false);
    const out = [...(doc as ArrayValue)];
    out[i] = updateAt(out[i]!, rest, fn);
    return out;
  }
  if (doc instanceof RegoSet) {
    if (!doc.has(head!)) throw new PatchFailure('missing');
    const out = new RegoSet(doc.values().filter((m) => !equals(m, head!)));
    return out.add(updateAt(head!, rest, fn));
  }
  throw new PatchFailure('missing');
}

function addAt(doc: Value, path: readonly Value[], value: Value): Value {
  if (path.length === 0) return value;
  return updateAt(doc, path, (parent, key) => {
    if (parent instanceof RegoObject) return parent.copy().set(key, value);
    if (Array.isArray(parent)) {
      const out = [...(parent as ArrayValue)];
      out.splice(arrayIndex(key, out.length, true), 0, value);
      return out;
    }
    if (parent instanceof RegoSet) return new RegoSet(parent.values()).add(value);
    throw new PatchFailure('not a container');
  });
}

function removeAt(doc: Value, path: readonly Value[]): Value {
  return updateAt(doc, path, (parent, key) => {
    if (parent instanceof RegoObject) {
      if (!parent.has(key)) throw new PatchFailure('missing');
      return parent.copy().delete(key);
    }
    if (Array.isArray(parent)) {
      const out = [...(parent as ArrayValue)];
      out.splice(arrayIndex(key, out.length, false), 1);
      return out;
    }
    if (parent instanceof RegoSet) {
      if (!parent.has(key)) throw new PatchFailure('missing');
      return new RegoSet(parent.values()).delete(key);
    }
    throw new PatchFailure('not a container');
  });
}

function applyPatch(doc: Value, patch: Value): Value {
  if (!(patch instanceof RegoObject)) throw new PatchFailure('patch is not an object');
  const op = patch.get('op');
  const path = patchPath(patch.get('path'), 'path');
  switch (op) {
    case 'add': {
      const value = patch.get('value');
      if (value === undefined) throw new PatchFailure('missing value');
      return addAt(doc, path, value);
    }
    case 'remove':
      return removeAt(doc, path);
    case 'replace': {
      const value = patch.get('value');
      if (value === undefined) throw new PatchFailure('missing value');
      if (path.length === 0) return value;
      getAt(doc, path);
      return addAt(removeAt(doc, path), path, value);
    }
    case 'move': {
      const from = patchPath(patch.get('from'), 'from');
      const value = getAt(doc, from);
      return addAt(removeAt(doc, from), path, value);
    }
    case 'copy': {
      const from = patchPath(patch.get('from'), 'from');
      return addAt(doc, path, getAt(doc, from));
    }
    case 'test': {
      const value = patch.get('value');
      if (value === undefined || !equals(getAt(doc, path), value)) throw new PatchFailure('test failed');
      return doc;
    }
    default:
      throw new PatchFailure('unknown op');
  }
}

export const jsonPaths = defineBuiltins(
  {
    name: 'json.filter',
    decl: T.fn([anyObject, T.union(T.arrayOf(T.union(T.string, anyArray)), T.setOf(T.union(T.string, anyArray)))], T.any),
    impl: ([o, paths]) => filterValue(obj(o!), pathTree(pathsOf(paths!))),
  },
  {
    name: 'json.remove',
    decl: T.fn([anyObject, T.union(T.arrayOf(T.union(T.string, anyArray)), T.setOf(T.union(T.string, anyArray)))], T.any),
    impl: ([o, paths]) => removeValue(obj(o!), pathTree(pathsOf(paths!))),
  },
  {
    name: 'json.patch',
    decl: T.fn([T.any, T.arrayOf(T.record({ op: T.string, path: T.any }, { key: T.any, value: T.any }))], T.any),
    impl: (args) => {
      const patches = args[1]!;
      let out: Value = args[0] as Value;
      try {
        for (const p of arr(patches!)) out = applyPatch(out, p);
      } catch (e) {
        if (e instanceof PatchFailure) return undefined;
        throw e;
      }
      return out;
    },
  },
);

