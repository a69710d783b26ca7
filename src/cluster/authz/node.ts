/**
 * The Node authorizer (kube.md §3.7) over the objects this server keeps. A kubelet identity
 * (`system:node:<name>` in group `system:nodes`) may read the secrets, configmaps and
 * persistentvolumeclaims that pods bound to its node reference, mint tokens for those pods'
 * service accounts, read and update its own Node and its pods' status, plus the fixed rules of
 * the `system:node` role. Every other user gets no opinion. The graph is fed by Pod events.
 */
import type { UserInfo } from '../authn/types.js';
import { goQuote, rulesAllow } from './rules.js';
import type { Attributes, AuthorizationResult, Authorizer, ObjectEvent, PolicyRule, RuleResolver, SubjectRules } from './types.js';

export const NodesGroup = 'system:nodes';
export const NodeUserPrefix = 'system:node:';

/** What a pod bound to a node lets that node reach. */
interface PodEdges {
  readonly node: string;
  readonly namespace: string;
  readonly name: string;
  readonly serviceAccount: string;
  readonly secrets: readonly string[];
  readonly configMaps: readonly string[];
  readonly claims: readonly string[];
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const arr = (v: unknown): Json[] => (Array.isArray(v) ? v.map(obj) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function podEdges(pod: Json): PodEdges | null {
  const metadata = obj(pod['metadata']);
  const spec = obj(pod['spec']);
  const node = str(spec['nodeName']);
  if (!node) return null;
  const secrets = new Set<string>();
  const configMaps = new Set<string>();
  const claims = new Set<string>();
  for (const ref of arr(spec['imagePullSecrets'])) if (str(ref['name'])) secrets.add(str(ref['name']));
  for (const volume of arr(spec['volumes'])) {
    if (str(obj(volume['secret'])['secretName'])) secrets.add(str(obj(volume['secret'])['secretName']));
    if (str(obj(volume['configMap'])['name'])) configMaps.add(str(obj(volume['configMap'])['name']));
    if (str(obj(volume['persistentVolumeClaim'])['claimName'])) claims.add(str(obj(volume['persistentVolumeClaim'])['claimName']));
    for (const source of arr(obj(volume['projected'])['sources'])) {
      if (str(obj(source['secret'])['name'])) secrets.add(str(obj(source['secret'])['name']));
      if (str(obj(source['configMap'])['name'])) configMaps.add(str(obj(source['configMap'])['name']));
    }
  }
  for (const container of [...arr(spec['containers']), ...arr(spec['initContainers']), ...arr(spec['ephemeralContainers'])]) {
    for (const from of arr(container['envFrom'])) {
      if (str(obj(from['secretRef'])['name'])) secrets.add(str(obj(from['secretRef'])['name']));
      if (str(obj(from['configMapRef'])['name'])) configMaps.add(str(obj(from['configMapRef'])['name']));
    }
    for (const env of arr(container['env'])) {
      const valueFrom = obj(env['valueFrom']);
      if (str(obj(valueFrom['secretKeyRef'])['name'])) secrets.add(str(obj(valueFrom['secretKeyRef'])['name']));
      if (str(obj(valueFrom['configMapKeyRef'])['name'])) configMaps.add(str(obj(valueFrom['configMapKeyRef'])['name']));
    }
  }
  return {
    node,
    namespace: str(metadata['namespace']),
    name: str(metadata['name']),
    serviceAccount: str(spec['serviceAccountName']) || 'default',
    secrets: [...secrets],
    configMaps: [...configMaps],
    claims: [...claims],
  };
}

/** Pods by node, and reference counts of (node, kind, namespace, name) edges. */
export class NodeGraph {
  private readonly pods = new Map<string, PodEdges>();
  private readonly edges = new Map<string, number>();

  apply(event: ObjectEvent): void {
    const object = event.object as Json;
    if (object['kind'] !== 'Pod') return;
    const metadata = obj(object['metadata']);
    const id = `${str(metadata['namespace'])}/${str(metadata['name'])}`;
    const previous = this.pods.get(id);
    if (previous) {
      this.pods.delete(id);
      this.count(previous, -1);
    }
    if (event.type === 'DELETED') return;
    const edges = podEdges(object);
    if (!edges) return;
    this.pods.set(id, edges);
    this.count(edges, +1);
  }

  private count(pod: PodEdges, delta: number): void {
    const keys = [
      edgeKey(pod.node, 'pods', pod.namespace, pod.name),
      edgeKey(pod.node, 'serviceaccounts', pod.namespace, pod.serviceAccount),
      ...pod.secrets.map((s) => edgeKey(pod.node, 'secrets', pod.namespace, s)),
      ...pod.configMaps.map((c) => edgeKey(pod.node, 'configmaps', pod.namespace, c)),
      ...pod.claims.map((c) => edgeKey(pod.node, 'persistentvolumeclaims', pod.namespace, c)),
    ];
    for (const key of new Set(keys)) {
      const n = (this.edges.get(key) ?? 0) + delta;
      if (n > 0) this.edges.set(key, n);
      else this.edges.delete(key);
    }
  }

  /** Whether a pod bound to `node` relates it to the object. */
  related(node: string, resource: string, namespace: string, name: string): boolean {
    return this.edges.has(edgeKey(node, resource, namespace, name));
  }
}

const edgeKey = (node: string, resource: string, namespace: string, name: string): string => `${node}\0${resource}\0${namespace}\0${name}`;

const read = ['get', 'list', 'watch'];
export const NodeLeaseNamespace = 'kube-node-lease';
/** The static rules of upstream's `system:node` role, for what the graph does not subdivide. */
export const nodeRules: readonly PolicyRule[] = [
  { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
  { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews', 'localsubjectaccessreviews'], verbs: ['create'] },
  { apiGroups: [''], resources: ['services', 'endpoints'], verbs: read },
  { apiGroups: [''], resources: ['nodes'], verbs: ['create', 'get', 'list', 'watch', 'patch', 'update'] },
  { apiGroups: [''], resources: ['nodes/status'], verbs: ['patch', 'update'] },
  { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch', 'update'] },
  { apiGroups: [''], resources: ['pods'], verbs: read },
  { apiGroups: [''], resources: ['pods'], verbs: ['create', 'delete'] },
  { apiGroups: [''], resources: ['pods/status'], verbs: ['patch', 'update'] },
  { apiGroups: [''], resources: ['pods/eviction'], verbs: ['create'] },
  { apiGroups: [''], resources: ['secrets', 'configmaps', 'persistentvolumeclaims'], verbs: ['get'] },
  { apiGroups: [''], resources: ['persistentvolumeclaims/status'], verbs: ['patch', 'update'] },
  { apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'] },
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update', 'patch', 'delete'] },
];

/** The node a user acts for, or null when the user is not a node identity. "" means a node identity with no name. */
export function nodeIdentity(user: UserInfo): string | null {
  if (!user.name.startsWith(NodeUserPrefix) || !user.groups.includes(NodesGroup)) return null;
  return user.name.slice(NodeUserPrefix.length);
}

const noOpinion = (reason = ''): AuthorizationResult => ({ decision: 'no-opinion', reason });
const allow: AuthorizationResult = { decision: 'allow', reason: '' };

export class NodeAuthorizer implements Authorizer, RuleResolver {
  constructor(private readonly graph: NodeGraph) {}

  authorize(attributes: Attributes): AuthorizationResult {
    const node = nodeIdentity(attributes.user);
    if (node === null) return noOpinion();
    if (node === '') return noOpinion(`unknown node for user ${goQuote(attributes.user.name)}`);
    if (attributes.resourceRequest) {
      const { verb, resource, subresource, namespace, name, apiGroup } = attributes;
      const related = (): AuthorizationResult => {
        if (name === '') return noOpinion('No Object name found');
        return this.graph.related(node, resource, namespace, name) ? allow : noOpinion(`no relationship found between node '${node}' and this object`);
      };
      if (apiGroup === '') {
        switch (resource) {
          case 'secrets':
          case 'configmaps':
            if (!['get', 'list', 'watch'].includes(verb)) return noOpinion('can only read resources of this type');
            if (subresource) return noOpinion('cannot read subresource');
            if (!namespace) return noOpinion('can only read namespaced object of this type');
            return related();
          case 'persistentvolumeclaims':
            if (subresource === 'status') {
              if (verb !== 'update' && verb !== 'patch') return noOpinion('can only get/update/patch this type');
              return related();
            }
            if (verb !== 'get') return noOpinion('can only get individual resources of this type');
            if (subresource) return noOpinion('cannot get subresource');
            return related();
          case 'serviceaccounts':
            if (verb !== 'create' || name === '') return noOpinion('can only create tokens for individual service accounts');
            if (subresource !== 'token') return noOpinion('can only create token subresource of serviceaccount');
            return related();
          case 'pods':
            // Reads of single pods, their status and evictions only for pods bound to this node.
            if (name !== '' && (verb === 'get' || subresource === 'status' || subresource === 'eviction')) return rulesAllow(attributes, nodeRules) ? related() : noOpinion();
            break;
          case 'nodes':
            // A node writes only its own Node object.
            if (name !== '' && name !== node && verb !== 'get') return noOpinion(`node '${node}' cannot modify node '${name}'`);
            break;
        }
      }
      if (apiGroup === 'coordination.k8s.io' && resource === 'leases') {
        if (!['get', 'create', 'update', 'patch', 'delete'].includes(verb)) return noOpinion('can only get, create, update, patch, or delete a node lease');
        if (namespace !== NodeLeaseNamespace) return noOpinion(`can only access leases in the ${goQuote(NodeLeaseNamespace)} system namespace`);
        if (verb !== 'create' && name !== node) return noOpinion('can only access node lease with the same name as the requesting node');
        return allow;
      }
    }
    return rulesAllow(attributes, nodeRules) ? allow : noOpinion();
  }

  /** Nodes see their static rules; the graph-dependent ones cannot be listed, so the answer is incomplete. */
  rulesFor(user: UserInfo): SubjectRules {
    if (nodeIdentity(user) === null) return { resourceRules: [], nonResourceRules: [], incomplete: false };
    return {
      resourceRules: nodeRules.map((r) => ({ verbs: r.verbs, apiGroups: r.apiGroups ?? [], resources: r.resources ?? [] })),
      nonResourceRules: [],
      incomplete: true,
    };
  }
}
