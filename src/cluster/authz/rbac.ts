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

/** One subject of one binding: what a lookup by subject key finds. */
interface Grant {
  readonly binding: Binding;
  readonly subject: Subject;
}

type GrantIndex = Map<string, Set<Grant>>;

const userKey = (name: string): string => `u\0${name}`;
const groupKey = (name: string): string => `g\0${name}`;
const roleKey = (namespace: string, name: string): string => `${namespace}/${name}`;

/** The keys under which grants for this subject are found; null for subjects that can never apply. */
function subjectKey(subject: Subject, bindingNamespace: string): string | null {
  switch (subject.kind) {
    case 'User':
      return userKey(subject.name);
    case 'Group':
      return groupKey(subject.name);
    case 'ServiceAccount': {
      const namespace = subject.namespace || bindingNamespace;
      return namespace ? userKey(`system:serviceaccount:${namespace}:${subject.name}`) : null;
    }
    default:
      return null;
  }
}

function describeSubject(subject: Subject, bindingNamespace: string): string {
  if (subject.kind === 'ServiceAccount') return `${subject.kind} ${goQuote(`${subject.name}/${subject.namespace || bindingNamespace}`)}`;
  return `${subject.kind} ${goQuote(subject.name)}`;
}

function describeGrant({ binding, subject }: Grant): string {
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

function rulesOf(object: Record<string, unknown>): PolicyRule[] {
  const rules = object['rules'];
  return Array.isArray(rules) ? rules.filter((r): r is PolicyRule => !!r && typeof r === 'object' && Array.isArray((r as PolicyRule).verbs)) : [];
}

export class RbacIndex implements RuleResolver, Authorizer {
  private readonly roles = new Map<string, readonly PolicyRule[]>();
  private readonly clusterRoles = new Map<string, readonly PolicyRule[]>();
  private readonly bindings = new Map<string, { binding: Binding; grants: Grant[] }>();
  private readonly clusterGrants: GrantIndex = new Map();
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
    if (!index && create) this.namespaceGrants.set(namespace, (index = new Map()));
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
      const key = subjectKey(subject, namespace);
      if (key === null) continue;
      const grant = { binding, subject };
      grants.push(grant);
      let set = index.get(key);
      if (!set) index.set(key, (set = new Set()));
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
      const key = subjectKey(grant.subject, entry.binding.namespace)!;
      const set = index.get(key);
      set?.delete(grant);
      if (set?.size === 0) index.delete(key);
    }
    if (entry.binding.namespace !== '' && index.size === 0) this.namespaceGrants.delete(entry.binding.namespace);
  }

  /** The rules a roleRef names, as seen from a binding in `namespace` ("" for a ClusterRoleBinding). */
  roleRefRules(roleRef: RoleRef, namespace: string): { rules: readonly PolicyRule[] } | { error: string } {
    if (roleRef.kind === 'ClusterRole') {
      const rules = this.clusterRoles.get(roleRef.name);
      return rules ? { rules } : { error: `clusterrole.rbac.authorization.k8s.io ${goQuote(roleRef.name)} not found` };
    }
    if (roleRef.kind === 'Role') {
      const rules = namespace === '' ? undefined : this.roles.get(roleKey(namespace, roleRef.name));
      return rules ? { rules } : { error: `role.rbac.authorization.k8s.io ${goQuote(roleRef.name)} not found` };
    }
    return { error: `unsupported role reference kind: ${goQuote(roleRef.kind)}` };
  }

  /**
   * Visits the grants that apply to `user`: cluster-wide first, then those of `namespace`.
   * The visitor returns true to stop.
   */
  private visit(user: UserInfo, namespace: string, visitor: (grant: Grant, rules: readonly PolicyRule[] | null, error?: string) => boolean): void {
    const keys = [userKey(user.name), ...user.groups.map(groupKey)];
    const indexes: GrantIndex[] = [this.clusterGrants];
    const local = namespace === '' ? undefined : this.namespaceGrants.get(namespace);
    if (local) indexes.push(local);
    for (const index of indexes) {
      for (const key of keys) {
        const grants = index.get(key);
        if (!grants) continue;
        for (const grant of grants) {
          const resolved = this.roleRefRules(grant.binding.roleRef, grant.binding.namespace);
          if ('error' in resolved ? visitor(grant, null, resolved.error) : visitor(grant, resolved.rules)) return;
        }
      }
    }
  }

  /** Allow with "RBAC: allowed by …", or no opinion (reason "" unless a referenced role is missing). Never deny. */
  authorize(attributes: Attributes): AuthorizationResult {
    let allowedBy: string | null = null;
    const errors: string[] = [];
    this.visit(attributes.user, attributes.namespace, (grant, rules, error) => {
      if (error !== undefined) errors.push(error);
      else if (rules && rulesAllow(attributes, rules)) allowedBy = describeGrant(grant);
      return allowedBy !== null;
    });
    if (allowedBy !== null) return { decision: 'allow', reason: `RBAC: allowed by ${allowedBy}` };
    return { decision: 'no-opinion', reason: errors.length ? `RBAC: ${aggregateMessage(errors)}` : '' };
  }

  /** Every PolicyRule that applies to `user` in `namespace`, and the resolution errors met on the way. */
  policyRulesFor(user: UserInfo, namespace: string): { rules: PolicyRule[]; errors: string[] } {
    const rules: PolicyRule[] = [];
    const errors: string[] = [];
    this.visit(user, namespace, (_grant, found, error) => {
      if (error !== undefined) errors.push(error);
      else if (found) rules.push(...found);
      return false;
    });
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
