/**
 * A compact structural schema per kind: enough to decode strictly (`fieldValidation=Strict` and
 * `Warn`: unknown fields), to reject values of the wrong JSON type before a strategy reads them,
 * and to publish per-kind paths in OpenAPI. Leaves that we store without interpreting are `any`.
 */
import { isPlainObject } from '../object.js';

export type Schema =
  | 'any'
  | 'string'
  | 'integer'
  | 'number'
  | 'boolean'
  | { readonly object: Readonly<Record<string, Schema>> }
  | { readonly list: Schema }
  | { readonly map: Schema };

export const obj = (fields: Record<string, Schema>): Schema => ({ object: fields });
export const list = (item: Schema): Schema => ({ list: item });
export const map = (value: Schema): Schema => ({ map: value });

export const labelSelectorSchema = obj({
  matchLabels: map('string'),
  matchExpressions: list(obj({ key: 'string', operator: 'string', values: list('string') })),
});

export const objectMetaSchema = obj({
  name: 'string',
  generateName: 'string',
  namespace: 'string',
  selfLink: 'string',
  uid: 'string',
  resourceVersion: 'string',
  generation: 'integer',
  creationTimestamp: 'any',
  deletionTimestamp: 'any',
  deletionGracePeriodSeconds: 'integer',
  labels: map('string'),
  annotations: map('string'),
  ownerReferences: list(obj({ apiVersion: 'string', kind: 'string', name: 'string', uid: 'string', controller: 'boolean', blockOwnerDeletion: 'boolean' })),
  finalizers: list('string'),
  managedFields: list('any'),
});

export interface SchemaProblems {
  /** Fields the schema does not know: `spec.foo`, `spec.containers[0].bar`. */
  readonly unknown: string[];
  /** Values of the wrong JSON type: `metadata.labels.a: expected string, got number`. */
  readonly wrongType: string[];
}

/** Check `value` against `root` (the kind's top-level fields; apiVersion, kind, metadata are added). */
export function checkSchema(value: unknown, root: Schema | undefined): SchemaProblems {
  const problems: SchemaProblems = { unknown: [], wrongType: [] };
  const top: Record<string, Schema> = { apiVersion: 'string', kind: 'string', metadata: objectMetaSchema };
  if (root && typeof root === 'object' && 'object' in root) Object.assign(top, root.object);
  else if (root === 'any' || root === undefined) {
    check(value, obj({ apiVersion: 'string', kind: 'string', metadata: objectMetaSchema }), '', problems, true);
    return problems;
  }
  check(value, { object: top }, '', problems, false);
  return problems;
}

function check(value: unknown, schema: Schema, path: string, problems: SchemaProblems, open: boolean): void {
  if (value === null || value === undefined || schema === 'any') return;
  const where = path || '<root>';
  if (typeof schema === 'string') {
    const ok =
      schema === 'string' ? typeof value === 'string'
      : schema === 'boolean' ? typeof value === 'boolean'
      : schema === 'integer' ? Number.isInteger(value)
      : typeof value === 'number';
    if (!ok) problems.wrongType.push(`${where}: expected ${schema}, got ${describe(value)}`);
    return;
  }
  if ('list' in schema) {
    if (!Array.isArray(value)) {
      problems.wrongType.push(`${where}: expected array, got ${describe(value)}`);
      return;
    }
    value.forEach((item, i) => check(item, schema.list, `${path}[${i}]`, problems, false));
    return;
  }
  if (!isPlainObject(value)) {
    problems.wrongType.push(`${where}: expected object, got ${describe(value)}`);
    return;
  }
  if ('map' in schema) {
    for (const [key, item] of Object.entries(value)) check(item, schema.map, path ? `${path}.${key}` : key, problems, false);
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    const child = path ? `${path}.${key}` : key;
    const fieldSchema = schema.object[key];
    if (fieldSchema === undefined) {
      if (!open) problems.unknown.push(child);
      continue;
    }
    check(item, fieldSchema, child, problems, false);
  }
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  return typeof value;
}
