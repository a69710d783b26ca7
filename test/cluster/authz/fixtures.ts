/** Small builders for RBAC objects and request attributes used across the authz tests. */
import type { UserInfo } from '../../../src/cluster/authn/types.js';
import type { Attributes, PolicyRule, Subject } from '../../../src/cluster/authz/types.js';

export const user = (name: string, ...groups: string[]): UserInfo => ({ name, groups });

export function resource(u: UserInfo, verb: string, namespace: string, apiGroup: string, resourceName: string, name = '', subresource = ''): Attributes {
  return { user: u, verb, resourceRequest: true, path: '', namespace, apiGroup, apiVersion: 'v1', resource: resourceName, subresource, name };
}

export function nonResource(u: UserInfo, verb: string, path: string): Attributes {
  return { user: u, verb, resourceRequest: false, path, namespace: '', apiGroup: '', apiVersion: '', resource: '', subresource: '', name: '' };
}

const rbac = 'rbac.authorization.k8s.io/v1';

export const role = (namespace: string, name: string, rules: PolicyRule[]) => ({ apiVersion: rbac, kind: 'Role', metadata: { namespace, name }, rules });
export const clusterRole = (name: string, rules: PolicyRule[], labels?: Record<string, string>) => ({
  apiVersion: rbac,
  kind: 'ClusterRole',
  metadata: { name, ...(labels ? { labels } : {}) },
  rules,
});
export const userSubject = (name: string): Subject => ({ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name });
export const groupSubject = (name: string): Subject => ({ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name });
export const saSubject = (name: string, namespace?: string): Subject => ({ kind: 'ServiceAccount', name, ...(namespace ? { namespace } : {}) });

export const roleBinding = (namespace: string, name: string, roleKind: 'Role' | 'ClusterRole', roleName: string, subjects: Subject[]) => ({
  apiVersion: rbac,
  kind: 'RoleBinding',
  metadata: { namespace, name },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleKind, name: roleName },
  subjects,
});
export const clusterRoleBinding = (name: string, roleName: string, subjects: Subject[]) => ({
  apiVersion: rbac,
  kind: 'ClusterRoleBinding',
  metadata: { name },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
  subjects,
});
