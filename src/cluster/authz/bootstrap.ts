/**
 * The bootstrap policy (kube.md §3.5): the default ClusterRoles and ClusterRoleBindings the server
 * creates at start when absent. Declarative: one table of roles, one of bindings.
 */
import { RbacGroup } from './rbac.js';
import type { ClusterRole, ClusterRoleBinding, PolicyRule } from './types.js';
import { nodeRules } from './node.js';

const Read = ['get', 'list', 'watch'];
const Write = ['create', 'update', 'patch', 'delete', 'deletecollection'];
const ReadWrite = [...Read, ...Write];

export const BootstrappingLabel = 'kubernetes.io/bootstrapping';
export const AutoupdateAnnotation = 'rbac.authorization.kubernetes.io/autoupdate';
export const AggregateTo = (role: 'admin' | 'edit' | 'view'): string => `rbac.authorization.k8s.io/aggregate-to-${role}`;

const rule = (verbs: string[], apiGroups: string[], resources: string[]): PolicyRule => ({ apiGroups, resources, verbs });
const urls = (verbs: string[], nonResourceURLs: string[]): PolicyRule => ({ nonResourceURLs, verbs });

interface RoleSpec {
  readonly name: string;
  readonly rules?: readonly PolicyRule[];
  readonly labels?: Record<string, string>;
  readonly aggregateFrom?: 'admin' | 'edit' | 'view';
}

const publicInfo = ['/healthz', '/livez', '/readyz', '/version', '/version/'];

const roles: readonly RoleSpec[] = [
  { name: 'cluster-admin', rules: [rule(['*'], ['*'], ['*']), urls(['*'], ['*'])] },
  { name: 'system:discovery', rules: [urls(['get'], ['/api', '/api/*', '/apis', '/apis/*', ...publicInfo, '/openapi', '/openapi/*'].sort())] },
  {
    name: 'system:basic-user',
    rules: [
      rule(['create'], ['authorization.k8s.io'], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
      rule(['create'], ['authentication.k8s.io'], ['selfsubjectreviews']),
    ],
  },
  { name: 'system:public-info-viewer', rules: [urls(['get'], publicInfo)] },
  { name: 'admin', aggregateFrom: 'admin' },
  { name: 'edit', aggregateFrom: 'edit', labels: { [AggregateTo('admin')]: 'true' } },
  { name: 'view', aggregateFrom: 'view', labels: { [AggregateTo('edit')]: 'true' } },
  {
    name: 'system:aggregate-to-admin',
    labels: { [AggregateTo('admin')]: 'true' },
    rules: [
      rule(['create'], ['authorization.k8s.io'], ['localsubjectaccessreviews']),
      rule(ReadWrite, [RbacGroup], ['roles', 'rolebindings']),
    ],
  },
  {
    name: 'system:aggregate-to-edit',
    labels: { [AggregateTo('edit')]: 'true' },
    rules: [
      rule(Read, [''], ['pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward', 'secrets', 'services/proxy']),
      rule(['impersonate'], [''], ['serviceaccounts']),
      rule(Write, [''], ['pods', 'pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward']),
      rule(['create'], [''], ['pods/eviction']),
      rule(Write, [''], ['replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/proxy', 'persistentvolumeclaims', 'configmaps', 'secrets', 'events']),
      rule(['create'], [''], ['serviceaccounts/token']),
      rule(Write, ['apps'], ['statefulsets', 'statefulsets/scale', 'daemonsets', 'deployments', 'deployments/scale', 'deployments/rollback', 'replicasets', 'replicasets/scale']),
      rule(Write, ['autoscaling'], ['horizontalpodautoscalers']),
      rule(Write, ['batch'], ['jobs', 'cronjobs']),
      rule(Write, ['policy'], ['poddisruptionbudgets']),
      rule(Write, ['networking.k8s.io'], ['networkpolicies', 'ingresses']),
      rule(ReadWrite, ['coordination.k8s.io'], ['leases']),
    ],
  },
  {
    name: 'system:aggregate-to-view',
    labels: { [AggregateTo('view')]: 'true' },
    rules: [
      rule(Read, [''], ['pods', 'replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/status', 'endpoints', 'persistentvolumeclaims', 'persistentvolumeclaims/status', 'configmaps']),
      rule(Read, [''], ['limitranges', 'resourcequotas', 'bindings', 'events', 'pods/status', 'resourcequotas/status', 'namespaces/status', 'replicationcontrollers/status', 'pods/log']),
      rule(Read, [''], ['namespaces']),
      rule(Read, ['discovery.k8s.io'], ['endpointslices']),
      rule(Read, ['apps'], ['controllerrevisions', 'statefulsets', 'statefulsets/status', 'statefulsets/scale', 'daemonsets', 'daemonsets/status', 'deployments', 'deployments/status', 'deployments/scale', 'replicasets', 'replicasets/status', 'replicasets/scale']),
      rule(Read, ['autoscaling'], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
      rule(Read, ['batch'], ['jobs', 'cronjobs', 'cronjobs/status', 'jobs/status']),
      rule(Read, ['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
      rule(Read, ['networking.k8s.io'], ['networkpolicies', 'ingresses', 'ingresses/status']),
    ],
  },
  {
    name: 'system:auth-delegator',
    rules: [rule(['create'], ['authentication.k8s.io'], ['tokenreviews']), rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews'])],
  },
  { name: 'system:node', rules: nodeRules },
  {
    name: 'system:service-account-issuer-discovery',
    rules: [urls(['get'], ['/.well-known/openid-configuration', '/.well-known/openid-configuration/', '/openid/v1/jwks', '/openid/v1/jwks/'])],
  },
];

/** ClusterRoleBinding name (= ClusterRole name) → bound groups. */
const bindings: Readonly<Record<string, readonly string[]>> = {
  'cluster-admin': ['system:masters'],
  'system:discovery': ['system:authenticated'],
  'system:basic-user': ['system:authenticated'],
  'system:public-info-viewer': ['system:authenticated', 'system:unauthenticated'],
  'system:service-account-issuer-discovery': ['system:serviceaccounts'],
};

const metadata = (name: string, labels: Record<string, string> = {}) => ({
  name,
  labels: { [BootstrappingLabel]: 'rbac-defaults', ...labels },
  annotations: { [AutoupdateAnnotation]: 'true' },
});

export function bootstrapClusterRoles(): ClusterRole[] {
  return roles.map((spec) => ({
    apiVersion: `${RbacGroup}/v1`,
    kind: 'ClusterRole',
    metadata: metadata(spec.name, spec.labels),
    ...(spec.aggregateFrom
      ? { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [AggregateTo(spec.aggregateFrom)]: 'true' } }] }, rules: [] }
      : { rules: spec.rules!.map((r) => ({ ...r })) }),
  }));
}

export function bootstrapClusterRoleBindings(): ClusterRoleBinding[] {
  return Object.entries(bindings).map(([name, groups]) => ({
    apiVersion: `${RbacGroup}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: metadata(name),
    roleRef: { apiGroup: RbacGroup, kind: 'ClusterRole', name },
    subjects: groups.map((group) => ({ kind: 'Group', apiGroup: RbacGroup, name: group })),
  }));
}

/**
 * The ClusterRoles and ClusterRoleBindings M creates at start when absent, roles first. The
 * aggregated roles (admin, edit, view) come with empty rules; aggregateClusterRoles fills them.
 */
export function bootstrapPolicy(): (ClusterRole | ClusterRoleBinding)[] {
  return [...bootstrapClusterRoles(), ...bootstrapClusterRoleBindings()];
}
