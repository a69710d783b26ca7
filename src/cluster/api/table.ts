/**
 * `meta.k8s.io/v1` Table output for `kubectl get` (kube.md §7.5): requested through the Accept
 * header (`application/json;as=Table;v=v1;g=meta.k8s.io`); columns come from the kind's table.
 */
import type { KubeObject } from '../object.js';
import type { ResourceType } from '../resources/types.js';

export function wantsTable(accept: string | undefined): boolean {
  return /as=Table/.test(accept ?? '') && /g=meta\.k8s\.io/.test(accept ?? '');
}

/** Table rows carry PartialObjectMetadata unless `includeObject=Object`/`None` says otherwise. */
export function toTable(type: ResourceType, objects: readonly KubeObject[], meta: { resourceVersion?: string; continue?: string; remainingItemCount?: number }, includeObject: string | null, apiVersion: string): object {
  const columns = type.columns ?? [];
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { ...(meta.resourceVersion ? { resourceVersion: meta.resourceVersion } : {}), ...(meta.continue ? { continue: meta.continue } : {}), ...(meta.remainingItemCount !== undefined ? { remainingItemCount: meta.remainingItemCount } : {}) },
    columnDefinitions: [
      { name: 'Name', type: 'string', format: 'name', description: 'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names', priority: 0 },
      ...columns.map(({ cell: _cell, ...definition }) => ({ format: '', ...definition })),
    ],
    rows: objects.map((object) => ({
      cells: [object.metadata.name ?? '', ...columns.map((c) => c.cell(object))],
      object:
        includeObject === 'None' ? null
        : includeObject === 'Object' ? { apiVersion, kind: type.kind, ...object }
        : { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: object.metadata },
    })),
  };
}
