/**
 * OpenAPI, as much as kubectl needs (G3, kube.md §7.4): `/openapi/v2` answers the protobuf form of
 * `{swagger: "2.0"}` (kubectl ≥1.27 then validates nothing client-side), and `/openapi/v3` lists one
 * document per group/version whose PATCH operations carry the GVK extension and the
 * `fieldValidation` parameter, so kubectl 1.29+ leaves field validation to the server and sends
 * `fieldValidation=Strict`. `components.schemas` carries each kind's structural schema (types, no
 * descriptions) for `kubectl explain`. PATCH operations declare no request body types, so kubectl
 * keeps computing client-side-apply patches from its built-in types (merge keys) rather than from these.
 */
import { createHash } from 'node:crypto';
import type { ResourceTable } from '../resources/index.js';
import { objectMetaSchema, type Schema } from './schema.js';


/** Protobuf `openapi_v2.Document{swagger: "2.0"}`. */
export const OPENAPI_V2_BODY = Buffer.from([0x0a, 0x03, 0x32, 0x2e, 0x30]);
export const OPENAPI_V2_CONTENT_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

export interface OpenApiV3 {
  readonly root: object;
  /** `api/v1`, `apis/rbac.authorization.k8s.io/v1` → document. */
  readonly documents: ReadonlyMap<string, object>;
}

export function buildOpenApiV3(table: ResourceTable, serverVersion: string): OpenApiV3 {
  const documents = new Map<string, object>();
  for (const [group, versions] of table.groups) {
    for (const version of versions) {
      const prefix = group ? `apis/${group}/${version}` : `api/${version}`;
      const paths: Record<string, object> = {};
      const schemas: Record<string, object> = {};
      for (const type of table.at(group, version)) {
        const gvk = { group, version, kind: type.kind };
        schemas[schemaName(group, version, type.kind)] = { ...kindSchema(type.schema), 'x-kubernetes-group-version-kind': [gvk] };
        const parameters = [
          { name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } },
          { name: 'fieldManager', in: 'query', schema: { type: 'string', uniqueItems: true } },
          { name: 'dryRun', in: 'query', schema: { type: 'string', uniqueItems: true } },
        ];
        const collection = `/${prefix}/${type.namespaced ? 'namespaces/{namespace}/' : ''}${type.resource}`;
        paths[collection] = { post: { 'x-kubernetes-group-version-kind': gvk, 'x-kubernetes-action': 'post', parameters, responses: { '201': { description: 'Created' } } } };
        if (!type.virtual) {
          paths[`${collection}/{name}`] = {
            put: { 'x-kubernetes-group-version-kind': gvk, 'x-kubernetes-action': 'put', parameters, responses: { '200': { description: 'OK' } } },
            patch: { 'x-kubernetes-group-version-kind': gvk, 'x-kubernetes-action': 'patch', parameters: [...parameters, { name: 'force', in: 'query', schema: { type: 'boolean', uniqueItems: true } }], responses: { '200': { description: 'OK' } } },
          };
        }
      }
      documents.set(prefix, { openapi: '3.0.0', info: { title: 'Kubernetes', version: serverVersion }, paths, components: { schemas } });
    }
  }
  const root = {
    paths: Object.fromEntries(
      [...documents].map(([prefix, doc]) => [prefix, { serverRelativeURL: `/openapi/v3/${prefix}?hash=${createHash('sha512').update(JSON.stringify(doc)).digest('hex').slice(0, 128).toUpperCase()}` }]),
    ),
  };
  return { root, documents };
}



/** `io.k8s.api.core.v1.Pod`, `io.k8s.api.rbac.v1.Role`: upstream's definition names. */
function schemaName(group: string, version: string, kind: string): string {
  const short = group === '' ? 'core' : group.replace(/\.k8s\.io$/, '').replace(/\.authorization$/, '');
  return `io.k8s.api.${short}.${version}.${kind}`;
}

/** A kind's structural schema as OpenAPI (types only, no descriptions), for `kubectl explain`. */
function kindSchema(schema: Schema | undefined): object {
  const top = schema && typeof schema === 'object' && 'object' in schema ? schema.object : {};
  return toOpenApi({ object: { apiVersion: 'string', kind: 'string', metadata: objectMetaSchema, ...top } });
}

function toOpenApi(schema: Schema): object {
  if (schema === 'any') return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  if (schema === 'integer') return { type: 'integer', format: 'int64' };
  if (typeof schema === 'string') return { type: schema };
  if ('list' in schema) return { type: 'array', items: toOpenApi(schema.list) };
  if ('map' in schema) return { type: 'object', additionalProperties: toOpenApi(schema.map) };
  return { type: 'object', properties: Object.fromEntries(Object.entries(schema.object).map(([k, v]) => [k, toOpenApi(v)])) };
}
