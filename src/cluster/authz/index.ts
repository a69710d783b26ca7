/** Cluster authorization: RBAC, the authorizer chain, escalation checks, impersonation and the review APIs. */
export * from './types.js';
export { RbacIndex, RbacGroup, splitRules } from './rbac.js';
export { NodeGraph, NodeAuthorizer, nodeIdentity } from './node.js';
export { buildAuthorizer, unionAuthorizer, unionRuleResolver, alwaysAllow, alwaysDeny, privilegedGroups, AuthorizationModes } from './modes.js';
export type { AuthorizerChain, AuthorizationMode } from './modes.js';
export { bootstrapPolicy, bootstrapClusterRoles, bootstrapClusterRoleBindings } from './bootstrap.js';
export { aggregateClusterRoles, labelSelectorMatches, rulesEqual } from './aggregation.js';
export { checkEscalation, escalationMessage, RoleRefNotFoundError } from './escalation.js';
export { forbiddenMessage, forbiddenError, baseForbiddenMessage } from './forbidden.js';
export { impersonate, ImpersonationRequestError } from './impersonation.js';
export type { RequestHeaders } from './impersonation.js';
export {
  reviewSelfSubjectAccess,
  reviewSubjectAccess,
  reviewLocalSubjectAccess,
  reviewSelfSubjectRules,
  reviewToken,
  selfSubjectReview,
  userInfoJson,
  InvalidReviewError,
  BadReviewRequestError,
} from './review.js';
export type { FieldCause } from './review.js';
export { ruleAllows, rulesAllow, covers } from './rules.js';
