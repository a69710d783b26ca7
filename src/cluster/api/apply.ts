/**
 * Field ownership (`metadata.managedFields`) and server-side apply (kube.md §7.6).
 *
 * A field set is the set of leaf paths an object sets; a path is a list of `fieldsV1` segments:
 * `f:<field>`, `k:{"<mergeKey>":<value>}` for an element of a keyed list, `v:<json>` for a member
 * of a set of primitives. Lists without a merge key are atomic (one leaf). Updates take ownership of
 * the fields they change; an apply owns exactly the fields of its configuration, conflicts with other
 * owners of fields whose value it would change (409 unless `force`), and removes the fields it
 * applied before and no longer applies when nobody else owns them.
 */
import { isDeepStrictEqual } from 'node:util';
import { StatusError } from '../errors.js';
import { clone, isPlainObject, now, type JsonObject, type KubeObject, type ManagedFieldsEntry } from '../object.js';
import { applyStrategicMergePatch } from './patch.js';

type Path = readonly string[];
const SEP = '\u0001';

const IGNORED_METADATA = new Set(['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp', 'managedFields', 'selfLink', 'generateName']);

/** The leaf paths `object` sets, keyed by their joined form. */
export function fieldSet(object: JsonObject, mergeKeys: Readonly<Record<string, string>>, statusField?: string): Map<string, Path> {
  const out = new Map<string, Path>();
  const walk = (value: unknown, path: string[], schemaPath: string) => {
    if (isPlainObject(value) && Object.keys(value).length > 0) {
      for (const [k, v] of Object.entries(value)) {
        if (path.length === 0 && (k === 'apiVersion' || k === 'kind' || k === statusField)) continue;
        if (path.length === 1 && path[0] === 'f:metadata' && IGNORED_METADATA.has(k)) continue;
        walk(v, [...path, `f:${k}`], schemaPath ? `${schemaPath}.${k}` : k);
      }
      return;
    }
    const mergeKey = mergeKeys[schemaPath];
    if (Array.isArray(value) && mergeKey !== undefined && value.length > 0) {
      for (const item of value) {
        if (mergeKey === '') add([...path, `v:${JSON.stringify(item)}`]);
        else if (isPlainObject(item)) walk(item, [...path, `k:${JSON.stringify({ [mergeKey]: item[mergeKey] })}`], `${schemaPath}[]`);
      }
      return;
    }
    add(path);
  };
  const add = (path: string[]) => {
    if (path.length) out.set(path.join(SEP), path);
  };
  walk(object, [], '');
  return out;
}

export function toFieldsV1(fields: Iterable<Path>): JsonObject {
  const root: JsonObject = {};
  for (const path of fields) {
    let node = root;
    for (const segment of path) node = (node[segment] ??= {}) as JsonObject;
  }
  return root;
}

export function fromFieldsV1(fieldsV1: unknown): Map<string, Path> {
  const out = new Map<string, Path>();
  const walk = (node: unknown, path: string[]) => {
    const entries = isPlainObject(node) ? Object.entries(node).filter(([k]) => k !== '.') : [];
    if (entries.length === 0) {
      if (path.length) out.set(path.join(SEP), path);
      return;
    }
    for (const [k, v] of entries) walk(v, [...path, k]);
  };
  walk(fieldsV1, []);
  return out;
}

function valueAt(object: unknown, path: Path): unknown {
  let node: unknown = object;
  for (const segment of path) {
    if (node === undefined) return undefined;
    if (segment.startsWith('f:')) node = isPlainObject(node) ? node[segment.slice(2)] : undefined;
    else if (segment.startsWith('k:')) {
      const key = JSON.parse(segment.slice(2)) as JsonObject;
      node = Array.isArray(node) ? node.find((item) => isPlainObject(item) && Object.entries(key).every(([k, v]) => isDeepStrictEqual(item[k], v))) : undefined;
    } else if (segment.startsWith('v:')) {
      const wanted = JSON.parse(segment.slice(2)) as unknown;
      node = Array.isArray(node) && node.some((v) => isDeepStrictEqual(v, wanted)) ? wanted : undefined;
    }
  }
  return node;
}

function removeAt(object: JsonObject, path: Path): void {
  const parent = valueAt(object, path.slice(0, -1));
  const last = path[path.length - 1]!;
  if (last.startsWith('f:') && isPlainObject(parent)) delete parent[last.slice(2)];
  else if (Array.isArray(parent)) {
    const target = valueAt(object, path);
    const index = parent.findIndex((item) => isDeepStrictEqual(item, target));
    if (index >= 0) parent.splice(index, 1);
  }
}

/** `.spec.containers[name="c"].image`, as upstream prints conflicting fields. */
export function displayPath(path: Path): string {
  return path
    .map((segment) => {
      if (segment.startsWith('f:')) return `.${segment.slice(2)}`;
      if (segment.startsWith('k:')) return `[${Object.entries(JSON.parse(segment.slice(2)) as JsonObject).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}]`;
      return `[=${segment.slice(2)}]`;
    })
    .join('');
}

export interface FieldContext {
  readonly mergeKeys: Readonly<Record<string, string>>;
  readonly statusField?: string;
  readonly apiVersion: string;
  readonly subresource?: string;
}

/** Record an Update by `manager`: it takes the fields whose values it changed (all of them on create). */
export function recordUpdate(next: KubeObject, previous: KubeObject | undefined, manager: string, context: FieldContext): void {
  const entries = (previous?.metadata.managedFields ?? next.metadata.managedFields ?? []).map((e) => ({ ...e }));
  const nextFields = fieldSet(next, context.mergeKeys, context.statusField);
  const changed = new Map<string, Path>();
  for (const [key, path] of nextFields) {
    if (!previous || !isDeepStrictEqual(valueAt(previous, path), valueAt(next, path))) changed.set(key, path);
  }
  const result: ManagedFieldsEntry[] = [];
  let mine: Map<string, Path> | undefined;
  for (const entry of entries) {
    const owned = fromFieldsV1(entry.fieldsV1);
    for (const key of [...owned.keys()]) if (!nextFields.has(key)) owned.delete(key);
    if (entry.manager === manager && entry.operation === 'Update') {
      mine = owned;
      continue;
    }
    for (const key of changed.keys()) owned.delete(key);
    if (owned.size) result.push({ ...entry, fieldsV1: toFieldsV1(owned.values()) });
  }
  const own = mine ?? new Map<string, Path>();
  for (const [k, p] of changed) own.set(k, p);
  if (own.size) {
    result.push({ manager, operation: 'Update', apiVersion: context.apiVersion, time: now(), fieldsType: 'FieldsV1', fieldsV1: toFieldsV1(own.values()), ...(context.subresource ? { subresource: context.subresource } : {}) });
  }
  if (result.length) next.metadata.managedFields = result;
  else delete next.metadata.managedFields;
}

/**
 * Server-side apply of `config` by `manager` onto `live` (undefined: the object is created).
 * Returns the merged object with its managedFields; throws 409 Conflict listing the conflicting
 * fields unless `force`.
 */
export function serverSideApply(live: KubeObject | undefined, config: KubeObject, manager: string, force: boolean, context: FieldContext): KubeObject {
  const applied = fieldSet(config, context.mergeKeys, context.statusField);
  const entries = (live?.metadata.managedFields ?? []).map((e) => ({ ...e, owned: fromFieldsV1(e.fieldsV1) }));
  const conflicts = new Map<string, string[]>();
  if (live) {
    for (const entry of entries) {
      if (entry.manager === manager) continue;
      for (const [key, path] of applied) {
        if (!entry.owned.has(key) || isDeepStrictEqual(valueAt(live, path), valueAt(config, path))) continue;
        if (force) entry.owned.delete(key);
        else conflicts.set(entry.manager, [...(conflicts.get(entry.manager) ?? []), displayPath(path)]);
      }
    }
  }
  if (conflicts.size) throw applyConflict(conflicts, context.apiVersion);

  const previous = entries.find((e) => e.manager === manager && e.operation === 'Apply');
  const { metadata: configMeta, ...configBody } = clone(config);
  const merged: KubeObject = live
    ? (applyStrategicMergePatch(live, { ...configBody, metadata: pickMetadata(configMeta) }, context.mergeKeys) as KubeObject)
    : clone(config);
  if (previous) {
    for (const [key, path] of previous.owned) {
      if (applied.has(key)) continue;
      if (entries.some((e) => e !== previous && e.owned.has(key))) continue;
      removeAt(merged, path);
    }
  }
  const managedFields: ManagedFieldsEntry[] = [];
  for (const { owned, ...entry } of entries) {
    if (entry === previous || (entry.manager === manager && entry.operation === 'Apply')) continue;
    if (owned.size) managedFields.push({ ...entry, fieldsV1: toFieldsV1(owned.values()) });
  }
  managedFields.push({ manager, operation: 'Apply', apiVersion: context.apiVersion, time: now(), fieldsType: 'FieldsV1', fieldsV1: toFieldsV1(applied.values()), ...(context.subresource ? { subresource: context.subresource } : {}) });
  merged.metadata.managedFields = managedFields;
  return merged;
}

function pickMetadata(meta: KubeObject['metadata'] | undefined): JsonObject {
  const out: JsonObject = {};
  for (const key of ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const) if (meta?.[key] !== undefined) out[key] = meta[key];
  return out;
}

function applyConflict(conflicts: Map<string, string[]>, apiVersion: string): StatusError {
  const total = [...conflicts.values()].reduce((n, list) => n + list.length, 0);
  const causes = [...conflicts].flatMap(([manager, paths]) => paths.map((p) => ({ reason: 'FieldManagerConflict', message: `conflict with "${manager}" using ${apiVersion}`, field: p })));
  let message: string;
  if (total === 1) {
    const [manager, [p]] = [...conflicts][0]! as [string, string[]];
    message = `Apply failed with 1 conflict: conflict with "${manager}" using ${apiVersion}: ${p}`;
  } else {
    message = `Apply failed with ${total} conflicts: ${[...conflicts].map(([manager, paths]) => `conflicts with "${manager}" using ${apiVersion}:\n${paths.map((p) => `- ${p}`).join('\n')}`).join('\n')}`;
  }
  return new StatusError(409, 'Conflict', message, { causes });
}
