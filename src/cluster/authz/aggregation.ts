/**
 * ClusterRole aggregation (kube.md §3.3): an aggregating role's rules are the union of the rules
 * of every ClusterRole its selectors match, in name order, without duplicates. Aggregation nests
 * (view ⊂ edit ⊂ admin), so the computation runs to a fixed point.
 */
import type { ClusterRole, LabelSelector, PolicyRule } from './types.js';

export function labelSelectorMatches(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (labels[key] !== value) return false;
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const present = Object.hasOwn(labels, key);
    switch (operator) {
      case 'In':
        if (!present || !values.includes(labels[key]!)) return false;
        break;
      case 'NotIn':
        if (present && values.includes(labels[key]!)) return false;
        break;
      case 'Exists':
        if (!present) return false;
        break;
      case 'DoesNotExist':
        if (present) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** A canonical text of a rule, for "already present" checks. */
const ruleKey = (r: PolicyRule): string =>
  JSON.stringify([r.verbs, r.apiGroups ?? [], r.resources ?? [], r.resourceNames ?? [], r.nonResourceURLs ?? []]);

export function rulesEqual(a: readonly PolicyRule[] | null | undefined, b: readonly PolicyRule[] | null | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  return x.length === y.length && x.every((r, i) => ruleKey(r) === ruleKey(y[i]!));
}

/**
 * name → aggregated rules, for every ClusterRole with an aggregationRule among `all`. M writes a
 * role back when its stored rules differ (compare with rulesEqual).
 */
export function aggregateClusterRoles(all: readonly object[]): Map<string, PolicyRule[]> {
  const roles = (all as ClusterRole[])
    .filter((r) => r && r.kind === 'ClusterRole' && typeof r.metadata?.name === 'string')
    .sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : a.metadata.name! > b.metadata.name! ? 1 : 0));
  const current = new Map<string, readonly PolicyRule[]>(roles.map((r) => [r.metadata.name!, r.rules ?? []]));
  const aggregating = roles.filter((r) => r.aggregationRule?.clusterRoleSelectors?.length);
  const result = new Map<string, PolicyRule[]>();
  for (let round = 0; round <= aggregating.length; round++) {
    let changed = false;
    for (const role of aggregating) {
      const name = role.metadata.name!;
      const seen = new Set<string>();
      const rules: PolicyRule[] = [];
      for (const selector of role.aggregationRule!.clusterRoleSelectors!) {
        for (const source of roles) {
          if (source.metadata.name === name || !labelSelectorMatches(selector, source.metadata.labels ?? {})) continue;
          for (const rule of current.get(source.metadata.name!) ?? []) {
            const key = ruleKey(rule);
            if (seen.has(key)) continue;
            seen.add(key);
            rules.push(rule);
          }
        }
      }
      if (!rulesEqual(current.get(name), rules)) changed = true;
      current.set(name, rules);
      result.set(name, rules);
    }
    if (!changed) break;
  }
  return result;
}
