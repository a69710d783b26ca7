/**
 * The RBAC authorizer and rule resolver over an in-memory index of Roles, ClusterRoles and their
 * bindings (kube.md §3.2). The registry feeds it object events; a decision looks up only the
 * bindings whose subjects name the user, one of its groups, or its service account — never a scan
 * of every binding.
 */
import type { UserInfo } from '../authn/types.js';
import { aggregateMessage, goQuote, rulesAllow } from './rules.js';
import type {
  Attributes,
  AuthorizationResult,
  Authorizer,
  NonResourceRule,
  ObjectEvent,
  PolicyRule,
  ResourceRule,
  RoleRef,
  RuleResolver,
  Subject,
  SubjectRules,
} from './types.js';

export const RbacGroup = 'rbac.authorization.k8s.io';

interface Binding {
  readonly kind: 'RoleBinding' | 'ClusterRoleBinding';
  readonly namespace: string;
  readonly name: string;
  readonly roleRef: RoleRef;
  readonly subjects: readonly Subject[];
}

/** One subject of one binding: what a lookup by subject finds. */
interface Grant {
  readonly binding: Binding;
  readonly subject: Subject;
  /** The allow reason, built once: `RBAC: allowed by RoleBinding "rb/ns" of Role "r" to User "u"`. */
  readonly reason: string;
}

/** Grants by user name and by group name (service accounts are users). */
interface GrantIndex {
  readonly users: Map<string, Set<Grant>>;
  readonly groups: Map<string, Set<Grant>>;
}

const newGrantIndex = (): GrantIndex => ({ users: new Map(), groups: new Map() });
const roleKey = (namespace: string, name: string): string => `${namespace}/${name}`;

/** Where grants for this subject are filed; null for subjects that can never apply. */
function subjectSlot(index: GrantIndex, subject: Subject, bindingNamespace: string): { map: Map<string, Set<Grant>>; key: string } | null {
  switch (subject.kind) {
    case 'User':
      return { map: index.users, key: subject.name };
    case 'Group':
      return { map: index.groups, key: subject.name };
    case 'ServiceAccount': {
      const namespace = subject.namespace || bindingNamespace;
      return namespace ? { map: index.users, key: `system:serviceaccount:${namespace}:${subject.name}` } : null;
    }
    default:
      return null;
  }
}

function describeSubject(subject: Subject, bindingNamespace: string): string {
  if (subject.kind === 'ServiceAccount') return `${subject.kind} ${goQuote(`${subject.name}/${subject.namespace || bindingNamespace}`)}`;
  return `${subject.kind} ${goQuote(subject.name)}`;
}

function describeGrant(binding: Binding, subject: Subject): string {
  const name = binding.kind === 'RoleBinding' ? `${binding.name}/${binding.namespace}` : binding.name;
  return `${binding.kind} ${goQuote(name)} of ${binding.roleRef.kind} ${goQuote(binding.roleRef.name)} to ${describeSubject(subject, binding.namespace)}`;
}

interface Metadata {
  name: string;
  namespace: string;
}

function metadataOf(object: Record<string, unknown>): Metadata | null {
  const metadata = object['metadata'];
  if (!metadata || typeof metadata !== 'object') return null;
  const { name, namespace } = metadata as Record<string, unknown>;
  if (typeof name !== 'string' || name === '') return null;
  return { name, namespace: typeof namespace === 'string' ? namespace : '' };
}

const stringList = (value: unknown): string[] | undefined =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : undefined;

/** The well-formed rules of a Role or ClusterRole, each field a list of strings (anything else is dropped). */
function rulesOf(object: Record<string, unknown>): PolicyRule[] {
  const rules = object['rules'];
  if (!Array.isArray(rules)) return [];
  const wellFormed: PolicyRule[] = [];
  for (const rule of rules) {
    if (!rule || typeof rule !== 'object') continue;
    const r = rule as Record<string, unknown>;
    const verbs = stringList(r['verbs']);
    if (!verbs) continue;
    const fields: [keyof PolicyRule, string[] | undefined][] = [
      ['apiGroups', stringList(r['apiGroups'])],
      ['resources', stringList(r['resources'])],
      ['resourceNames', stringList(r['resourceNames'])],
      ['nonResourceURLs', stringList(r['nonResourceURLs'])],
    ];
    wellFormed.push(Object.assign({ verbs }, Object.fromEntries(fields.filter(([, v]) => v !== undefined))) as PolicyRule);
  }
  return wellFormed;
}

export class RbacIndex implements RuleResolver, Authorizer {
  private readonly roles = new Map<string, readonly PolicyRule[]>();
  private readonly clusterRoles = new Map<string, readonly PolicyRule[]>();
  private readonly bindings = new Map<string, { binding: Binding; grants: Grant[] }>();
  private readonly clusterGrants: GrantIndex = newGrantIndex();
  private readonly namespaceGrants = new Map<string, GrantIndex>();

  /** Applies one registry event for a Role, ClusterRole, RoleBinding or ClusterRoleBinding; other kinds are ignored. */
  apply(event: ObjectEvent): void {
    const object = event.object as Record<string, unknown>;
    const kind = object['kind'];
    const metadata = metadataOf(object);
    if (!metadata) return;
    const deleted = event.type === 'DELETED';
    switch (kind) {
      case 'Role':
        if (deleted) this.roles.delete(roleKey(metadata.namespace, metadata.name));
        else this.roles.set(roleKey(metadata.namespace, metadata.name), rulesOf(object));
        return;
      case 'ClusterRole':
        if (deleted) this.clusterRoles.delete(metadata.name);
        else this.clusterRoles.set(metadata.name, rulesOf(object));
        return;
      case 'RoleBinding':
      case 'ClusterRoleBinding': {
        const namespace = kind === 'RoleBinding' ? metadata.namespace : '';
        this.removeBinding(`${kind}/${namespace}/${metadata.name}`);
        if (!deleted) this.addBinding(kind, namespace, metadata.name, object);
        return;
      }
    }
  }

  private grantsFor(namespace: string, create: boolean): GrantIndex | undefined {
    if (namespace === '') return this.clusterGrants;
    let index = this.namespaceGrants.get(namespace);
    if (!index && create) this.namespaceGrants.set(namespace, (index = newGrantIndex()));
    return index;
  }

  private addBinding(kind: Binding['kind'], namespace: string, name: string, object: Record<string, unknown>): void {
    const roleRef = object['roleRef'] as RoleRef | undefined;
    if (!roleRef || typeof roleRef.name !== 'string' || typeof roleRef.kind !== 'string') return;
    const subjects = Array.isArray(object['subjects']) ? (object['subjects'] as Subject[]).filter((s) => s && typeof s.name === 'string') : [];
    const binding: Binding = { kind, namespace, name, roleRef, subjects };
    const index = this.grantsFor(namespace, true)!;
    const grants: Grant[] = [];
    for (const subject of subjects) {
      const slot = subjectSlot(index, subject, namespace);
      if (slot === null) continue;
      const grant = { binding, subject, reason: `RBAC: allowed by ${describeGrant(binding, subject)}` };
      grants.push(grant);
      let set = slot.map.get(slot.key);
      if (!set) slot.map.set(slot.key, (set = new Set()));
      set.add(grant);
    }
    this.bindings.set(`${kind}/${namespace}/${name}`, { binding, grants });
  }

  private removeBinding(id: string): void {
    const entry = this.bindings.get(id);
    if (!entry) return;
    this.bindings.delete(id);
    const index = this.grantsFor(entry.binding.namespace, false);
    if (!index) return;
    for (const grant of entry.grants) {
      const slot = subjectSlot(index, grant.subject, entry.binding.namespace)!;
      const set = slot.map.get(slot.key);
      set?.delete(grant);
      if (set?.size === 0) slot.map.delete(slot.key);
    }
    if (entry.binding.namespace !== '' && index.users.size === 0 && index.groups.size === 0) this.namespaceGrants.delete(entry.binding.namespace);
  }

  /** The rules a roleRef names, as seen from a binding in `namespace` ("" for a ClusterRoleBinding); undefined when missing. */
  private rulesOf(roleRef: RoleRef, namespace: string): readonly PolicyRule[] | undefined {
    if (roleRef.kind === 'ClusterRole') return this.clusterRoles.get(roleRef.name);
    if (roleRef.kind === 'Role' && namespace !== '') return this.roles.get(roleKey(namespace, roleRef.name));
    return undefined;
  }

  /** The rules a roleRef names, or the lookup error upstream reports. */
  roleRefRules(roleRef: RoleRef, namespace: string): { rules: readonly PolicyRule[] } | { error: string } {
    const rules = this.rulesOf(roleRef, namespace);
    if (rules) return { rules };
    if (roleRef.kind === 'ClusterRole') return { error: `clusterrole.rbac.authorization.k8s.io ${goQuote(roleRef.name)} not found` };
    if (roleRef.kind === 'Role') return { error: `role.rbac.authorization.k8s.io ${goQuote(roleRef.name)} not found` };
    return { error: `unsupported role reference kind: ${goQuote(roleRef.kind)}` };
  }

  /** The grants that apply to `user`: cluster-wide first, then those of `namespace`; the user's own before its groups'. */
  private *grantsOf(user: UserInfo, namespace: string): Generator<Grant> {
    const local = namespace === '' ? undefined : this.namespaceGrants.get(namespace);
    for (const index of local ? [this.clusterGrants, local] : [this.clusterGrants]) {
      const own = index.users.get(user.name);
      if (own) yield* own;
      if (index.groups.size === 0) continue;
      for (const group of user.groups) {
        const grants = index.groups.get(group);
        if (grants) yield* grants;
      }
    }
  }

  /** Allow with "RBAC: allowed by …", or no opinion (reason "" unless a referenced role is missing). Never deny. */
  authorize(attributes: Attributes): AuthorizationResult {
    const { user, namespace } = attributes;
    const errors: string[] = [];
    const local = namespace === '' ? undefined : this.namespaceGrants.get(namespace);
    for (let pass = 0; pass < 2; pass++) {
      const index = pass === 0 ? this.clusterGrants : local;
      if (!index) continue;
      let grant = this.firstAllowing(index.users.get(user.name), attributes, errors);
      for (let i = 0; !grant && i < user.groups.length && index.groups.size > 0; i++) {
        grant = this.firstAllowing(index.groups.get(user.groups[i]!), attributes, errors);
      }
      if (grant) return { decision: 'allow', reason: grant.reason };
    }
    return { decision: 'no-opinion', reason: errors.length ? `RBAC: ${aggregateMessage(errors)}` : '' };
  }

  private firstAllowing(grants: Set<Grant> | undefined, attributes: Attributes, errors: string[]): Grant | undefined {
    if (!grants) return undefined;
    for (const grant of grants) {
      const rules = this.rulesOf(grant.binding.roleRef, grant.binding.namespace);
      if (rules === undefined) errors.push((this.roleRefRules(grant.binding.roleRef, grant.binding.namespace) as { error: string }).error);
      else if (rulesAllow(attributes, rules)) return grant;
    }
    return undefined;
  }

  /** Every PolicyRule that applies to `user` in `namespace`, and the resolution errors met on the way. */
  policyRulesFor(user: UserInfo, namespace: string): { rules: PolicyRule[]; errors: string[] } {
    const rules: PolicyRule[] = [];
    const errors: string[] = [];
    for (const grant of this.grantsOf(user, namespace)) {
      const resolved = this.roleRefRules(grant.binding.roleRef, grant.binding.namespace);
      if ('error' in resolved) errors.push(resolved.error);
      else rules.push(...resolved.rules);
    }
    return { rules, errors };
  }

  rulesFor(user: UserInfo, namespace: string): SubjectRules {
    const { rules, errors } = this.policyRulesFor(user, namespace);
    return { ...splitRules(rules), incomplete: false, ...(errors.length ? { evaluationError: aggregateMessage(errors) } : {}) };
  }

  /** Sizes, for diagnostics and the benchmark. */
  get size(): { roles: number; clusterRoles: number; bindings: number } {
    return { roles: this.roles.size, clusterRoles: this.clusterRoles.size, bindings: this.bindings.size };
  }
}

/** PolicyRules as SelfSubjectRulesReview shows them. */
export function splitRules(rules: readonly PolicyRule[]): { resourceRules: ResourceRule[]; nonResourceRules: NonResourceRule[] } {
  const resourceRules: ResourceRule[] = [];
  const nonResourceRules: NonResourceRule[] = [];
  for (const rule of rules) {
    if (rule.resources?.length) {
      resourceRules.push({
        verbs: rule.verbs,
        apiGroups: rule.apiGroups ?? [],
        resources: rule.resources,
        ...(rule.resourceNames?.length ? { resourceNames: rule.resourceNames } : {}),
      });
    }
    if (rule.nonResourceURLs?.length) nonResourceRules.push({ verbs: rule.verbs, nonResourceURLs: rule.nonResourceURLs });
  }
  return { resourceRules, nonResourceRules };
}
