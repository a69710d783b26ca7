/**
 * The authorization contract of the cluster API server (kube.md §3).
 *
 * An authorizer answers one question — may this user do this verb on this thing? — with allow,
 * deny, or no opinion. A chain (the `--authorization-mode` list) asks each authorizer in order; the
 * first allow or deny decides, and no opinion from all of them is a 403.
 */
import type { UserInfo } from '../authn/types.js';

/** One request, as derived from its URL and method (kube.md §3.1, upstream RequestInfo + user). */
export interface Attributes {
  readonly user: UserInfo;
  /** get, list, watch, create, update, patch, delete, deletecollection, impersonate, bind, escalate…; for non-resource requests the lower-case HTTP method. */
  readonly verb: string;
  readonly resourceRequest: boolean;
  /** The URL path (used by non-resource rules and in the 403 message for non-resource requests). */
  readonly path: string;
  /** "" for cluster-scoped requests. */
  readonly namespace: string;
  /** "" for the core group. */
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly resource: string;
  readonly subresource: string;
  readonly name: string;
}

/**
 * allow: the request may proceed. deny: it must not, whatever later authorizers say.
 * no-opinion: this authorizer has nothing to say; the next one is asked (RBAC never denies).
 */
export type Decision = 'allow' | 'deny' | 'no-opinion';

export interface AuthorizationResult {
  readonly decision: Decision;
  /** Why; "" when there is nothing to say (kube.md G7: a plain RBAC miss has reason ""). */
  readonly reason: string;
}

/** Synchronous: everything an authorizer needs is in memory (RbacIndex, NodeGraph). */
export interface Authorizer {
  authorize(attributes: Attributes): AuthorizationResult;
}

/** `rbac.authorization.k8s.io/v1` PolicyRule. */
export interface PolicyRule {
  readonly verbs: readonly string[];
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly nonResourceURLs?: readonly string[];
}

/** `authorization.k8s.io/v1` ResourceRule (SelfSubjectRulesReview status). */
export interface ResourceRule {
  readonly verbs: readonly string[];
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly resourceNames?: readonly string[];
}

/** `authorization.k8s.io/v1` NonResourceRule (SelfSubjectRulesReview status). */
export interface NonResourceRule {
  readonly verbs: readonly string[];
  readonly nonResourceURLs?: readonly string[];
}

export interface SubjectRules {
  readonly resourceRules: readonly ResourceRule[];
  readonly nonResourceRules: readonly NonResourceRule[];
  /** True when some bindings could not be resolved (e.g. a missing role); the lists are then a lower bound. */
  readonly incomplete: boolean;
  readonly evaluationError?: string;
}

/** What a user may do in a namespace ("" = cluster-wide rules only): the basis of SelfSubjectRulesReview and escalation checks. */
export interface RuleResolver {
  rulesFor(user: UserInfo, namespace: string): SubjectRules;
}

/** An object event from the registry (initial list as ADDED, then the watch). */
export interface ObjectEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly object: object;
}

// ----- rbac.authorization.k8s.io/v1 objects, structurally (M owns the generic object type) -----

export interface ObjectMeta {
  readonly name?: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly ownerReferences?: readonly object[];
  readonly finalizers?: readonly string[];
}

export interface LabelSelectorRequirement {
  readonly key: string;
  readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  readonly values?: readonly string[];
}

export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly LabelSelectorRequirement[];
}

export interface Role {
  readonly apiVersion?: string;
  readonly kind: 'Role';
  readonly metadata: ObjectMeta;
  readonly rules?: readonly PolicyRule[] | null;
}

export interface ClusterRole {
  readonly apiVersion?: string;
  readonly kind: 'ClusterRole';
  readonly metadata: ObjectMeta;
  readonly rules?: readonly PolicyRule[] | null;
  readonly aggregationRule?: { readonly clusterRoleSelectors?: readonly LabelSelector[] } | null;
}

export interface Subject {
  readonly kind: 'User' | 'Group' | 'ServiceAccount' | string;
  readonly apiGroup?: string;
  readonly name: string;
  readonly namespace?: string;
}

export interface RoleRef {
  readonly apiGroup: string;
  readonly kind: 'Role' | 'ClusterRole' | string;
  readonly name: string;
}

export interface RoleBinding {
  readonly apiVersion?: string;
  readonly kind: 'RoleBinding';
  readonly metadata: ObjectMeta;
  readonly subjects?: readonly Subject[] | null;
  readonly roleRef: RoleRef;
}

export interface ClusterRoleBinding {
  readonly apiVersion?: string;
  readonly kind: 'ClusterRoleBinding';
  readonly metadata: ObjectMeta;
  readonly subjects?: readonly Subject[] | null;
  readonly roleRef: RoleRef;
}

export type RbacObject = Role | ClusterRole | RoleBinding | ClusterRoleBinding;

/**
 * A 403. The message is the exact `Status.message` (kube.md §3.4, §3.6); M maps it to a Status with
 * reason Forbidden and `details` built from `group`, `resource` (the Status `details.kind`) and `name`.
 */
export class ForbiddenError extends Error {
  constructor(
    message: string,
    readonly details: { readonly group: string; readonly resource: string; readonly name: string } = { group: '', resource: '', name: '' },
  ) {
    super(message);
    this.name = 'ForbiddenError';
  }
}
