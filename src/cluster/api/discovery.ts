/**
 * Discovery documents, built once from the resource table (kube.md §7.1, §7.2): legacy
 * (`/api`, `/apis`, `/api/v1`, `/apis/g/v`) for every client, and aggregated
 * (`apidiscovery.k8s.io` v2 or v2beta1) in the version the client's Accept asks for (G4).
 */
import type { ResourceTable } from '../resources/index.js';
import { apiVersionOf, type ResourceType } from '../resources/types.js';

export interface DiscoveryDocuments {
  /** `/api` legacy. */
  readonly coreVersions: object;
  /** `/apis` legacy. */
  readonly groupList: object;
  /** `/api/v1`, `/apis/g/v` → APIResourceList. */
  readonly resourceLists: ReadonlyMap<string, object>;
  /** `/apis/g` → APIGroup. */
  readonly groups: ReadonlyMap<string, object>;
  /** Aggregated `/api` and `/apis` for a discovery version (v2 or v2beta1). */
  aggregated(which: 'api' | 'apis', version: 'v2' | 'v2beta1'): object;
}

const AGGREGATED = /application\/json;g=apidiscovery\.k8s\.io;v=(v2|v2beta1);as=APIGroupDiscoveryList/;

/** The first aggregated-discovery version the Accept header lists (clients list v2 before v2beta1), or undefined for legacy. */
export function aggregatedVersionAccepted(accept: string | undefined): 'v2' | 'v2beta1' | undefined {
  return AGGREGATED.exec((accept ?? '').replace(/\s+/g, ''))?.[1] as 'v2' | 'v2beta1' | undefined;
}

export function aggregatedContentType(version: 'v2' | 'v2beta1'): string {
  return `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`;
}

export function buildDiscovery(table: ResourceTable): DiscoveryDocuments {
  const groupNames = [...table.groups.keys()].filter((g) => g !== '').sort();
  const groupDoc = (group: string) => {
    const versions = table.groups.get(group)!;
    return {
      name: group,
      versions: versions.map((v) => ({ groupVersion: apiVersionOf(group, v), version: v })),
      preferredVersion: { groupVersion: apiVersionOf(group, versions[0]!), version: versions[0]! },
    };
  };
  const resourceLists = new Map<string, object>();
  for (const [group, versions] of table.groups) {
    for (const version of versions) {
      const resources = table.at(group, version).flatMap((type) => [
        {
          name: type.resource,
          singularName: type.singular,
          namespaced: type.namespaced,
          kind: type.kind,
          verbs: [...type.verbs],
          ...(type.shortNames ? { shortNames: [...type.shortNames] } : {}),
          ...(type.categories ? { categories: [...type.categories] } : {}),
          ...(type.virtual ? {} : { storageVersionHash: hash(`${group}/${type.storageVersion}/${type.kind}`) }),
        },
        ...(type.subresources ?? []).map((sub) => ({
          name: `${type.resource}/${sub.name}`,
          singularName: '',
          namespaced: type.namespaced,
          ...(sub.group !== undefined ? { group: sub.group, version: sub.version } : {}),
          kind: sub.kind,
          verbs: [...sub.verbs],
        })),
      ]);
      const groupVersion = apiVersionOf(group, version);
      resourceLists.set(groupVersion, { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources });
    }
  }
  const groups = new Map(groupNames.map((g) => [g, { kind: 'APIGroup', apiVersion: 'v1', ...groupDoc(g) }]));

  const aggregatedResource = (type: ResourceType, version: string) => ({
    resource: type.resource,
    responseKind: { group: type.group, version, kind: type.kind },
    scope: type.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: type.singular,
    verbs: [...type.verbs],
    ...(type.shortNames ? { shortNames: [...type.shortNames] } : {}),
    ...(type.categories ? { categories: [...type.categories] } : {}),
    ...(type.subresources?.length
      ? {
          subresources: type.subresources.map((sub) => ({
            subresource: sub.name,
            responseKind: { group: sub.group ?? type.group, version: sub.version ?? version, kind: sub.kind },
            verbs: [...sub.verbs],
          })),
        }
      : {}),
  });
  const aggregatedGroup = (group: string) => ({
    metadata: { name: group, creationTimestamp: null },
    versions: table.groups.get(group)!.map((version) => ({
      version,
      resources: table.at(group, version).map((type) => aggregatedResource(type, version)),
      freshness: 'Current',
    })),
  });
  const cache = new Map<string, object>();
  return {
    coreVersions: { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '' }] },
    groupList: { kind: 'APIGroupList', apiVersion: 'v1', groups: groupNames.map(groupDoc) },
    resourceLists,
    groups,
    aggregated(which, version) {
      const key = `${which}/${version}`;
      let doc = cache.get(key);
      if (!doc) {
        doc = { kind: 'APIGroupDiscoveryList', apiVersion: `apidiscovery.k8s.io/${version}`, metadata: {}, items: (which === 'api' ? [''] : groupNames).map(aggregatedGroup) };
        cache.set(key, doc);
      }
      return doc;
    },
  };
}

function hash(text: string): string {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (h * 31 + text.charCodeAt(i)) | 0;
  return Buffer.from(String(h >>> 0)).toString('base64').slice(0, 11);
}
