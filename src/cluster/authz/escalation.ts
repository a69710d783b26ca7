/**
 * Privilege-escalation prevention for RBAC writes (kube.md §3.3, §3.4): a user may only write a
 * Role or ClusterRole whose permissions they hold (or with `escalate`), and only bind a role whose
 * permissions they hold (or with `bind`). `system:masters` is exempt.
 */
import type { UserInfo } from '../authn/types.js';
import { SystemPrivilegedGroup } from '../authn/types.js';
import { wrapForbidden } from './forbidden.js';
import { RbacGroup, type RbacIndex } from './rbac.js';
import { aggregateMessage, compactRules, compactString, covers, goQuote, goQuoteList } from './rules.js';
import { ForbiddenError, type Authorizer, type PolicyRule, type RbacObject, type RoleRef } from './types.js';

/** A binding's roleRef names a role that does not exist: upstream answers 404 NotFound with this message. */
export class RoleRefNotFoundError extends Error {
  readonly group = RbacGroup;
  constructor(
    /** Singular, as upstream's lister reports it: `role` or `clusterrole`. */
    readonly resource: string,
    readonly roleName: string,
  ) {
    super(`${resource}.${RbacGroup} ${goQuote(roleName)} not found`);
    this.name = 'RoleRefNotFoundError';
  }
}

const fullAuthority: readonly PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

const plural: Record<string, string> = { Role: 'roles', ClusterRole: 'clusterroles', RoleBinding: 'rolebindings', ClusterRoleBinding: 'clusterrolebindings' };

/** upstream ConfirmNoEscalation: null when the user's own RBAC rules cover `rules`, the error text otherwise. */
export function escalationMessage(user: UserInfo, namespace: string, rules: readonly PolicyRule[], rbac: RbacIndex): string | null {
  const owner = rbac.policyRulesFor(user, namespace);
  const { covered, missing } = covers(owner.rules, rules);
  if (covered) return null;
  const lines = [...new Set(compactRules(missing).map(compactString))].sort();
  let message = `user ${goQuote(user.name)} (groups=${goQuoteList(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${lines.join('\n')}`;
  if (owner.errors.length) message += `; resolution errors: [${aggregateMessage(owner.errors)}]`;
  return message;
}

function onlyGCFieldsChanged(object: Record<string, unknown>, old: Record<string, unknown>): boolean {
  const strip = (o: Record<string, unknown>) => {
    const { ownerReferences: _o, finalizers: _f, resourceVersion: _r, managedFields: _m, generation: _g, ...metadata } = (o['metadata'] ?? {}) as Record<string, unknown>;
    return canonical({ ...o, metadata });
  };
  return strip(object) === strip(old);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * Throws ForbiddenError (or RoleRefNotFoundError for a binding to a missing role) when `user` may
 * not write `object`. `oldObject` is the stored object for an update; absent for a create.
 * Objects of other kinds pass.
 */
export function checkEscalation(user: UserInfo, object: object, authorizer: Authorizer, rbac: RbacIndex, oldObject?: object): void {
  const rbacObject = object as RbacObject;
  const resource = plural[rbacObject.kind];
  if (!resource) return;
  if (user.groups.includes(SystemPrivilegedGroup)) return;
  if (oldObject && onlyGCFieldsChanged(object as Record<string, unknown>, oldObject as Record<string, unknown>)) return;
  const name = rbacObject.metadata?.name ?? '';
  const namespace = rbacObject.kind === 'Role' || rbacObject.kind === 'RoleBinding' ? (rbacObject.metadata?.namespace ?? '') : '';
  const forbidden = (detail: string) => new ForbiddenError(wrapForbidden(RbacGroup, resource, name, detail), { group: RbacGroup, resource, name });
  const allowed = (verb: string, onResource: string, onName: string) =>
    authorizer.authorize({
      user,
      verb,
      resourceRequest: true,
      path: '',
      namespace,
      apiGroup: RbacGroup,
      apiVersion: '*',
      resource: onResource,
      subresource: '',
      name: onName,
    }).decision === 'allow';

  let rules: readonly PolicyRule[];
  if (rbacObject.kind === 'Role' || rbacObject.kind === 'ClusterRole') {
    if (allowed('escalate', resource, oldObject ? name : '')) return;
    if (rbacObject.kind === 'ClusterRole') {
      const aggregates = (o: object | undefined) => !!(o as { aggregationRule?: unknown } | undefined)?.aggregationRule;
      if ((aggregates(object) || aggregates(oldObject)) && escalationMessage(user, '', fullAuthority, rbac) !== null) {
        throw forbidden('must have cluster-admin privileges to use the aggregationRule');
      }
    }
    rules = rbacObject.rules ?? [];
  } else {
    const roleRef: RoleRef = rbacObject.roleRef;
    const refResource = roleRef.kind === 'Role' ? 'roles' : roleRef.kind === 'ClusterRole' ? 'clusterroles' : '';
    if (refResource && allowed('bind', refResource, roleRef.name)) return;
    const resolved = rbac.roleRefRules(roleRef, namespace);
    if ('error' in resolved) {
      if (roleRef.kind === 'Role' || roleRef.kind === 'ClusterRole') throw new RoleRefNotFoundError(roleRef.kind.toLowerCase(), roleRef.name);
      throw forbidden(resolved.error);
    }
    rules = resolved.rules;
  }
  const message = escalationMessage(user, namespace, rules, rbac);
  if (message !== null) throw forbidden(message);
}
