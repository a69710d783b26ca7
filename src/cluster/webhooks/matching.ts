/**
 * Does a webhook want this request? Rules (scope, operation, group, version, resource and
 * subresource, each with `*`), then namespaceSelector and objectSelector (kube.md §6.2).
 */
import { labelSelectorMatches } from '../registry/selectors.js';
import type { AdmissionAttributes } from '../admission.js';
import type { ResourceType } from '../resources/types.js';
import type { LabelSelector, RuleWithOperations, Webhook } from './webhook.js';

/** Kinds no webhook is ever called for, so that a broken webhook cannot lock its own configuration out. */
const EXEMPT = new Set([
  'admissionregistration.k8s.io/validatingwebhookconfigurations',
  'admissionregistration.k8s.io/mutatingwebhookconfigurations',
  'admissionregistration.k8s.io/validatingadmissionpolicies',
  'admissionregistration.k8s.io/validatingadmissionpolicybindings',
  'admissionregistration.k8s.io/mutatingadmissionpolicies',
  'admissionregistration.k8s.io/mutatingadmissionpolicybindings',
]);

export function isExempt(type: ResourceType): boolean {
  return EXEMPT.has(`${type.group}/${type.resource}`);
}

/**
 * The version the webhook is to see the request at, or undefined when no rule matches. With
 * matchPolicy Exact only the request's own version counts; with Equivalent any version the kind is
 * served at does (the object is the same in every version here, G13).
 */
export function matchRules(webhook: Webhook, attributes: AdmissionAttributes): string | undefined {
  const versions = webhook.matchPolicy === 'Exact' ? [attributes.version] : [attributes.version, ...attributes.type.versions.filter((v) => v !== attributes.version)];
  for (const version of versions) {
    if (webhook.rules.some((rule) => ruleMatches(rule, attributes, version))) return version;
  }
  return undefined;
}

function ruleMatches(rule: RuleWithOperations, a: AdmissionAttributes, version: string): boolean {
  const { type } = a;
  const isNamespace = type.group === '' && type.resource === 'namespaces';
  if (rule.scope === 'Namespaced' && (!type.namespaced || isNamespace)) return false;
  if (rule.scope === 'Cluster' && type.namespaced) return false;
  return (
    matchesAny(rule.operations, a.operation) &&
    matchesAny(rule.apiGroups, type.group) &&
    matchesAny(rule.apiVersions, version) &&
    rule.resources.some((pattern) => resourceMatches(pattern, type.resource, a.subresource))
  );
}

function matchesAny(patterns: readonly string[], value: string): boolean {
  return patterns.some((p) => p === '*' || p === value);
}

/** `pods`, `pods/status`, `*` (no subresources), `pods/*` (any subresource, and the pod itself, as upstream matches), `*\/scale`, `*\/*`. */
function resourceMatches(pattern: string, resource: string, subresource: string): boolean {
  const [wantResource, wantSub] = pattern.split('/', 2) as [string, string | undefined];
  if (wantResource !== '*' && wantResource !== resource) return false;
  if (wantSub === undefined) return subresource === '';
  return wantSub === '*' || wantSub === subresource;
}

/** An empty selector matches everything; `labelSelectorMatches` treats a missing one as no match. */
export function selectorMatches(selector: LabelSelector, labels: Record<string, string> | undefined): boolean {
  if (!selector.matchLabels && !selector.matchExpressions) return true;
  return labelSelectorMatches(selector, labels);
}

/** objectSelector: the object or the old object must match; a request without either never does (unless the selector is empty). */
export function objectSelectorMatches(webhook: Webhook, attributes: AdmissionAttributes): boolean {
  const selector = webhook.objectSelector;
  if (!selector.matchLabels && !selector.matchExpressions) return true;
  return [attributes.object, attributes.oldObject].some((o) => o !== undefined && labelSelectorMatches(selector, o.metadata.labels));
}
