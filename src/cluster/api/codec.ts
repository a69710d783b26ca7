/**
 * Request bodies → JSON objects, by Content-Type: JSON, YAML, Kubernetes protobuf (G2), and the
 * four patch types. Field validation (`fieldValidation=Strict|Warn|Ignore`, kube.md §7.4) is applied
 * here, against the kind's schema, so every write path gets it the same way.
 */
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { badRequest, StatusError, unsupportedMediaType } from '../errors.js';
import { isPlainObject, type JsonObject } from '../object.js';
import type { PatchType } from '../registry/registry.js';
import type { ResourceType } from '../resources/types.js';
import { decodeProtobufObject } from './protobuf.js';
import { checkSchema } from './schema.js';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

const PATCH_TYPES: Record<string, PatchType> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
};

export function patchTypeOf(contentType: string | undefined): PatchType {
  const type = PATCH_TYPES[mediaType(contentType)];
  if (!type) {
    throw new StatusError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json`);
  }
  return type;
}

/** Parse JSON text with Go-like messages for the common mistakes. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw badRequest(`error decoding request body: ${(error as Error).message}`);
  }
}

function parseYamlDocument(text: string): unknown {
  try {
    return parseYaml(text, { uniqueKeys: true, schema: 'core' });
  } catch (error) {
    if (error instanceof YAMLParseError) throw badRequest(`error converting YAML to JSON: ${error.message.split('\n')[0]}`);
    throw badRequest(`error converting YAML to JSON: ${(error as Error).message}`);
  }
}

/** Decode a create/update body into an object (not yet checked against the URL's kind). */
export function decodeObject(body: Buffer | undefined, contentType: string | undefined): JsonObject {
  const type = mediaType(contentType);
  const raw = body ?? Buffer.alloc(0);
  let value: unknown;
  if (type === 'application/vnd.kubernetes.protobuf') return decodeProtobufObject(raw);
  if (type === 'application/json' || type === '') value = parseJson(raw.toString('utf8'));
  else if (type === 'application/yaml' || type === 'application/x-yaml' || type === 'text/yaml') value = parseYamlDocument(raw.toString('utf8'));
  else throw unsupportedMediaType();
  if (!isPlainObject(value)) throw badRequest(`Object 'Kind' is missing in '${raw.toString('utf8').slice(0, 200)}'`);
  return value;
}

export function decodePatch(body: Buffer | undefined, patchType: PatchType): unknown {
  const text = (body ?? Buffer.alloc(0)).toString('utf8');
  if (patchType === 'apply') {
    const value = parseYamlDocument(text);
    if (!isPlainObject(value)) throw badRequest('error decoding YAML: the apply configuration must be an object');
    return value;
  }
  return parseJson(text);
}

/**
 * Check `object` against the kind's schema. Wrong JSON types are always 400; unknown fields are
 * 400 under Strict, warnings under Warn, ignored under Ignore. Returns the warnings.
 */
export function validateFields(object: JsonObject, type: ResourceType, mode: FieldValidation): string[] {
  const problems = checkSchema(object, type.schema);
  if (problems.wrongType.length) throw badRequest(`${type.kind} in version "${type.storageVersion}" cannot be handled as a ${type.kind}: ${problems.wrongType.join(', ')}`);
  if (problems.unknown.length === 0 || mode === 'Ignore') return [];
  const texts = problems.unknown.map((p) => `unknown field "${p}"`);
  if (mode === 'Strict') throw badRequest(`strict decoding error: ${texts.join(', ')}`);
  return texts;
}

export function fieldValidationOf(query: URLSearchParams): FieldValidation {
  const value = query.get('fieldValidation');
  if (value === null || value === '') return 'Warn';
  if (value === 'Strict' || value === 'Warn' || value === 'Ignore') return value;
  throw badRequest(`fieldValidation parameter unsupported: ${value}. Expected one of: [Ignore Warn Strict]`);
}
