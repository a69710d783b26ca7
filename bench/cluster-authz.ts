/**
 * RBAC authorization decisions per second, in process, with 10,000 RoleBindings across 1,000
 * namespaces and 200 ClusterRoles (plus the bootstrap policy), for a mix of allowed and denied
 * requests. Measured in the same run beside two baselines over the very same bindings and rules:
 *
 *  - linear scan: every binding is visited per request (what an unindexed RBAC does). The index
 *    must beat it by a wide margin — this ratio is the point of the index.
 *  - map floor: one Map lookup of a precomputed decision per request — the cheapest conceivable
 *    authorizer. The ratio says how close the real matcher comes to free.
 *
 *   npm run bench -- cluster-authz [--seconds 2]
 */
import { aggregateClusterRoles } from '../src/cluster/authz/aggregation.js';
import { bootstrapPolicy } from '../src/cluster/authz/bootstrap.js';
import { buildAuthorizer } from '../src/cluster/authz/modes.js';
import { NodeGraph } from '../src/cluster/authz/node.js';
import { RbacIndex } from '../src/cluster/authz/rbac.js';
import { rulesAllow } from '../src/cluster/authz/rules.js';
import type { Attributes, ClusterRole, ClusterRoleBinding, PolicyRule, RoleBinding } from '../src/cluster/authz/types.js';
import { arg } from './support.js';

const NAMESPACES = 1000;
const BINDINGS_PER_NAMESPACE = 10;
const ROLES = 200;
const USERS = 2000;
const GROUPS = 100;
const REQUESTS = 20_000;

/** A small deterministic PRNG, so every run builds the same cluster and request mix. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = prng(7);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

const resources = ['pods', 'configmaps', 'secrets', 'services', 'deployments', 'jobs', 'events', 'endpoints'];
const groupsOf: Record<string, string> = { deployments: 'apps', jobs: 'batch' };
const verbs = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];

const roles: ClusterRole[] = Array.from({ length: ROLES }, (_, i) => {
  const rules: PolicyRule[] = Array.from({ length: 3 }, () => {
    const resource = pick(resources);
    return { apiGroups: [groupsOf[resource] ?? ''], resources: [resource], verbs: [pick(verbs), pick(verbs)] };
  });
  return { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: `role-${i}` }, rules };
});

const bindings: RoleBinding[] = [];
for (let n = 0; n < NAMESPACES; n++) {
  for (let b = 0; b < BINDINGS_PER_NAMESPACE; b++) {
    const subjects = [
      random() < 0.8 ? { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: `user-${Math.floor(random() * USERS)}` } : { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: `group-${Math.floor(random() * GROUPS)}` },
    ];
    bindings.push({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { namespace: `ns-${n}`, name: `binding-${b}` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `role-${Math.floor(random() * ROLES)}` },
      subjects,
    });
  }
}

const bootstrap = bootstrapPolicy();
const aggregated = aggregateClusterRoles(bootstrap);
const clusterObjects = bootstrap.map((o) => (o.kind === 'ClusterRole' && aggregated.has(o.metadata.name!) ? { ...o, rules: aggregated.get(o.metadata.name!) } : o));

const rbac = new RbacIndex();
for (const object of [...clusterObjects, ...roles, ...bindings]) rbac.apply({ type: 'ADDED', object });
const authorizer = buildAuthorizer(['Node', 'RBAC'], rbac, new NodeGraph());

const ruleOf = new Map<string, readonly PolicyRule[]>([...clusterObjects, ...roles].filter((o): o is ClusterRole => o.kind === 'ClusterRole').map((r) => [r.metadata.name!, r.rules ?? []]));

// Half of the requests are shaped after a real binding (likely allowed), half are random (mostly denied).
const requests: Attributes[] = Array.from({ length: REQUESTS }, (_, i) => {
  let namespace: string;
  let name: string;
  let resource = pick(resources);
  let verb = pick(verbs);
  if (i % 2 === 0) {
    const binding = pick(bindings);
    namespace = binding.metadata.namespace!;
    const subject = binding.subjects![0]!;
    name = subject.kind === 'User' ? subject.name : `member-of-${subject.name}`;
    const rule = pick(ruleOf.get(binding.roleRef.name)!);
    resource = rule.resources![0]!;
    verb = pick(rule.verbs);
  } else {
    namespace = `ns-${Math.floor(random() * NAMESPACES)}`;
    name = `user-${Math.floor(random() * USERS)}`;
  }
  const groups = [`group-${Math.floor(random() * GROUPS)}`, 'system:authenticated'];
  if (name.startsWith('member-of-')) groups.unshift(name.slice('member-of-'.length));
  return {
    user: { name, groups },
    verb,
    resourceRequest: true,
    path: `/api/v1/namespaces/${namespace}/${resource}`,
    namespace,
    apiGroup: groupsOf[resource] ?? '',
    apiVersion: 'v1',
    resource,
    subresource: '',
    name: '',
  };
});

// Baseline 1: the same decision by visiting every binding (cluster-wide ones, then all RoleBindings).
const clusterBindings = clusterObjects.filter((o): o is ClusterRoleBinding => o.kind === 'ClusterRoleBinding');
function linearScan(a: Attributes): boolean {
  if (a.user.groups.includes('system:masters')) return true;
  const applies = (subjects: RoleBinding['subjects']) => (subjects ?? []).some((s) => (s.kind === 'User' ? s.name === a.user.name : s.kind === 'Group' && a.user.groups.includes(s.name)));
  for (const b of clusterBindings) if (applies(b.subjects) && rulesAllow(a, ruleOf.get(b.roleRef.name) ?? [])) return true;
  for (const b of bindings) if (b.metadata.namespace === a.namespace && applies(b.subjects) && rulesAllow(a, ruleOf.get(b.roleRef.name) ?? [])) return true;
  return false;
}

// Baseline 2: a precomputed decision per request, looked up in a Map.
const precomputed = new Map(requests.map((a, i) => [`${i}`, authorizer.authorize(a).decision === 'allow']));
const keys = requests.map((_, i) => `${i}`);

let allowed = 0;
for (const a of requests) {
  const indexed = authorizer.authorize(a).decision === 'allow';
  if (indexed !== linearScan(a)) throw new Error(`index and linear scan disagree on ${JSON.stringify(a)}`);
  if (indexed) allowed++;
}

function measure(label: string, seconds: number, decide: (i: number) => boolean): number {
  let done = 0;
  let sink = 0;
  const start = process.hrtime.bigint();
  const limit = BigInt(Math.round(seconds * 1e9));
  while (process.hrtime.bigint() - start < limit) {
    for (let i = 0; i < 1000; i++) if (decide((done + i) % REQUESTS)) sink++;
    done += 1000;
  }
  const rate = done / (Number(process.hrtime.bigint() - start) / 1e9);
  console.log(`${label.padEnd(34)} ${Math.round(rate).toLocaleString('en-US').padStart(12)} decisions/s`);
  if (sink < 0) console.log(sink);
  return rate;
}

const seconds = arg('--seconds', 2);
console.log(`cluster: ${rbac.size.bindings.toLocaleString('en-US')} bindings (${bindings.length.toLocaleString('en-US')} RoleBindings in ${NAMESPACES} namespaces), ${rbac.size.clusterRoles} ClusterRoles; ${REQUESTS} requests, ${((100 * allowed) / REQUESTS).toFixed(1)}% allowed`);
console.log(`node ${process.version}, ${seconds}s per measurement`);
measure('warm-up (indexed RBAC)', Math.min(1, seconds / 2), (i) => authorizer.authorize(requests[i]!).decision === 'allow');
const indexedRate = measure('indexed RBAC (Node,RBAC chain)', seconds, (i) => authorizer.authorize(requests[i]!).decision === 'allow');
const linearRate = measure('baseline: linear scan', seconds, (i) => linearScan(requests[i]!));
const floorRate = measure('baseline: Map lookup floor', seconds, (i) => precomputed.get(keys[i]!)!);
console.log(`ratio indexed / linear scan: ${(indexedRate / linearRate).toFixed(1)}x`);
console.log(`ratio indexed / Map floor:   ${(indexedRate / floorRate).toFixed(2)}`);
