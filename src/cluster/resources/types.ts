/**
 * A served kind is one `ResourceType`: a small declarative strategy over the one generic store
 * (registry/store.ts). Everything kind-specific — scope, names, versions, defaults per version,
 * validation, schema for strict field validation, selectable fields, table columns, strategic
 * merge keys — is data here; the API machinery reads it and never switches on a kind.
 */
import type { FieldError } from '../errors.js';
import type { KubeObject } from '../object.js';
import type { Schema } from '../api/schema.js';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export const READ_WRITE: readonly Verb[] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
export const CREATE_ONLY: readonly Verb[] = ['create'];

export interface TableColumn {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'date' | 'number' | 'boolean';
  readonly format?: string;
  readonly description: string;
  /** 0: always shown; 1: only with `-o wide`. */
  readonly priority: 0 | 1;
  readonly cell: (object: KubeObject) => string | number;
}

/** How a kind's objects are named (apimachinery's name validators). */
export type NameRule = 'dns1123-subdomain' | 'dns1123-label' | 'path-segment';

export interface Subresource {
  readonly name: string;
  readonly kind: string;
  readonly group?: string;
  readonly version?: string;
  readonly verbs: readonly Verb[];
}

/** A kind that is not stored: a POST is answered by a function (reviews, token requests). */
export type Virtual = 'selfsubjectaccessreviews' | 'subjectaccessreviews' | 'localsubjectaccessreviews' | 'selfsubjectrulesreviews' | 'tokenreviews' | 'selfsubjectreviews';

export interface ResourceType {
  readonly group: string;
  /** Served versions, preferred first. Objects are stored once and shared across them (G13). */
  readonly versions: readonly string[];
  /** The version objects are stored in. */
  readonly storageVersion: string;
  readonly resource: string;
  readonly singular: string;
  readonly kind: string;
  readonly listKind: string;
  readonly namespaced: boolean;
  readonly verbs: readonly Verb[];
  readonly shortNames?: readonly string[];
  readonly categories?: readonly string[];
  readonly subresources?: readonly Subresource[];
  /** Values are encrypted at rest when the server has an encryption key (Secrets). */
  readonly encrypted?: boolean;
  /** Not stored: creates are answered by a review function. */
  readonly virtual?: Virtual;
  readonly nameRule?: NameRule;
  /** Fields known for strict decoding (`fieldValidation=Strict`); metadata/apiVersion/kind are implied. */
  readonly schema?: Schema;
  /** Fill defaults for an object written at `version` (defaults differ by version: G13). */
  readonly defaults?: (object: KubeObject, version: string) => void;
  /** Kind-specific validation beyond the name; `old` is set for updates; `version` is the request's. */
  readonly validate?: (object: KubeObject, old: KubeObject | undefined, version: string) => FieldError[];
  /** Fields (besides metadata.name, metadata.namespace) usable in `fieldSelector`. */
  readonly selectableFields?: Readonly<Record<string, (object: KubeObject) => string>>;
  /** `kubectl get` columns after NAME. */
  readonly columns?: readonly TableColumn[];
  /** Strategic-merge keys: dotted path (list elements as `[]`) → merge key; `''` means a set of primitives. */
  readonly mergeKeys?: Readonly<Record<string, string>>;
  /** Top-level fields whose changes on the main resource are ignored (the `status` subresource owns them). */
  readonly statusField?: string;
}

export function apiVersionOf(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}
