/** `rbac.authorization.k8s.io/v1`: Role, ClusterRole, RoleBinding, ClusterRoleBinding. */
import { field, type FieldError } from '../errors.js';
import { isPlainObject, type JsonObject, type KubeObject } from '../object.js';
import { labelSelectorSchema, list, obj } from '../api/schema.js';
import { AGE, CREATED_AT } from './columns.js';
import { READ_WRITE, type ResourceType } from './types.js';

export const RBAC_GROUP = 'rbac.authorization.k8s.io';
const rbac = { group: RBAC_GROUP, versions: ['v1'], storageVersion: 'v1' } as const;

const policyRule = obj({ verbs: list('string'), apiGroups: list('string'), resources: list('string'), resourceNames: list('string'), nonResourceURLs: list('string') });
const subject = obj({ kind: 'string', apiGroup: 'string', name: 'string', namespace: 'string' });
const roleRef = obj({ apiGroup: 'string', kind: 'string', name: 'string' });

function validateRules(role: KubeObject, clusterScoped: boolean): FieldError[] {
  const errors: FieldError[] = [];
  const rules = role.rules;
  if (rules === undefined || rules === null) return errors;
  (rules as JsonObject[]).forEach((rule, i) => {
    if (!isPlainObject(rule)) return;
    const at = `rules[${i}]`;
    if (!Array.isArray(rule.verbs) || rule.verbs.length === 0) errors.push(field.required(`${at}.verbs`, 'verbs must contain at least one value'));
    const nonResource = Array.isArray(rule.nonResourceURLs) && rule.nonResourceURLs.length > 0;
    if (nonResource) {
      if (!clusterScoped) errors.push(field.invalid(`${at}.nonResourceURLs`, rule.nonResourceURLs, 'namespaced rules cannot apply to non-resource URLs'));
      if ((Array.isArray(rule.apiGroups) && rule.apiGroups.length) || (Array.isArray(rule.resources) && rule.resources.length)) {
        errors.push(field.invalid(`${at}.nonResourceURLs`, rule.nonResourceURLs, 'rules cannot apply to both regular resources and non-resource URLs'));
      }
      return;
    }
    if (!Array.isArray(rule.apiGroups) || rule.apiGroups.length === 0) errors.push(field.required(`${at}.apiGroups`, 'resource rules must supply at least one api group'));
    if (!Array.isArray(rule.resources) || rule.resources.length === 0) errors.push(field.required(`${at}.resources`, 'resource rules must supply at least one resource'));
  });
  return errors;
}

function defaultSubjects(binding: KubeObject): void {
  for (const s of (Array.isArray(binding.subjects) ? binding.subjects : []) as JsonObject[]) {
    if (!isPlainObject(s)) continue;
    if ((s.kind === 'User' || s.kind === 'Group') && s.apiGroup === undefined) s.apiGroup = RBAC_GROUP;
    if (s.kind === 'ServiceAccount' && s.apiGroup === undefined) s.apiGroup = '';
  }
  if (isPlainObject(binding.roleRef)) (binding.roleRef as JsonObject).apiGroup ??= RBAC_GROUP;
}

function validateBinding(binding: KubeObject, old: KubeObject | undefined, kinds: readonly string[]): FieldError[] {
  const errors: FieldError[] = [];
  const ref = binding.roleRef as JsonObject | undefined;
  if (!isPlainObject(ref)) {
    errors.push(field.required('roleRef'));
  } else {
    if (ref.apiGroup !== RBAC_GROUP) errors.push(field.notSupported('roleRef.apiGroup', ref.apiGroup ?? '', [RBAC_GROUP]));
    if (!kinds.includes(String(ref.kind))) errors.push(field.notSupported('roleRef.kind', ref.kind ?? '', kinds));
    if (!ref.name) errors.push(field.required('roleRef.name'));
  }
  if (old && JSON.stringify(old.roleRef) !== JSON.stringify(binding.roleRef)) {
    errors.push(field.invalid('roleRef', binding.roleRef, 'cannot change roleRef'));
  }
  ((binding.subjects ?? []) as JsonObject[]).forEach((s, i) => {
    if (!isPlainObject(s)) return;
    const at = `subjects[${i}]`;
    if (!s.name) errors.push(field.required(`${at}.name`));
    switch (s.kind) {
      case 'ServiceAccount':
        if (s.apiGroup !== '') errors.push(field.notSupported(`${at}.apiGroup`, s.apiGroup, ['']));
        if (!s.namespace && binding.kind === 'ClusterRoleBinding') errors.push(field.required(`${at}.namespace`));
        break;
      case 'User':
      case 'Group':
        if (s.apiGroup !== RBAC_GROUP) errors.push(field.notSupported(`${at}.apiGroup`, s.apiGroup, [RBAC_GROUP]));
        break;
      default:
        errors.push(field.notSupported(`${at}.kind`, s.kind ?? '', ['ServiceAccount', 'User', 'Group']));
    }
  });
  return errors;
}

function bindingColumns(): ResourceType['columns'] {
  const subjects = (kind: string) => (b: KubeObject) =>
    ((b.subjects ?? []) as JsonObject[]).filter((s) => s.kind === kind).map((s) => (kind === 'ServiceAccount' ? `${s.namespace ?? ''}/${s.name}` : String(s.name))).join(', ');
  return [
    { name: 'Role', type: 'string', description: 'RoleRef is the reference to the role.', priority: 0, cell: (b) => `${(b.roleRef as JsonObject).kind}/${(b.roleRef as JsonObject).name}` },
    AGE,
    { name: 'Users', type: 'string', description: 'Users in the roleBinding', priority: 1, cell: subjects('User') },
    { name: 'Groups', type: 'string', description: 'Groups in the roleBinding', priority: 1, cell: subjects('Group') },
    { name: 'ServiceAccounts', type: 'string', description: 'ServiceAccounts in the roleBinding', priority: 1, cell: subjects('ServiceAccount') },
  ];
}

export const rbacResources: readonly ResourceType[] = [
  {
    ...rbac,
    resource: 'roles',
    singular: 'role',
    kind: 'Role',
    listKind: 'RoleList',
    namespaced: true,
    verbs: READ_WRITE,
    nameRule: 'path-segment',
    schema: obj({ rules: list(policyRule) }),
    validate: (role) => validateRules(role, false),
    columns: [CREATED_AT],
  },
  {
    ...rbac,
    resource: 'clusterroles',
    singular: 'clusterrole',
    kind: 'ClusterRole',
    listKind: 'ClusterRoleList',
    namespaced: false,
    verbs: READ_WRITE,
    nameRule: 'path-segment',
    schema: obj({ rules: list(policyRule), aggregationRule: obj({ clusterRoleSelectors: list(labelSelectorSchema) }) }),
    validate: (role) => validateRules(role, true),
    columns: [CREATED_AT],
  },
  {
    ...rbac,
    resource: 'rolebindings',
    singular: 'rolebinding',
    kind: 'RoleBinding',
    listKind: 'RoleBindingList',
    namespaced: true,
    verbs: READ_WRITE,
    nameRule: 'path-segment',
    schema: obj({ subjects: list(subject), roleRef }),
    defaults: defaultSubjects,
    validate: (b, old) => validateBinding(b, old, ['Role', 'ClusterRole']),
    columns: bindingColumns(),
  },
  {
    ...rbac,
    resource: 'clusterrolebindings',
    singular: 'clusterrolebinding',
    kind: 'ClusterRoleBinding',
    listKind: 'ClusterRoleBindingList',
    namespaced: false,
    verbs: READ_WRITE,
    nameRule: 'path-segment',
    schema: obj({ subjects: list(subject), roleRef }),
    defaults: defaultSubjects,
    validate: (b, old) => validateBinding(b, old, ['ClusterRole']),
    columns: bindingColumns(),
  },
];
