/**
 * RBAC rule semantics (kube.md §3.2 matching, §3.4 coverage) and the Go-compatible formatting the
 * wire messages need. Pure functions over PolicyRule; no state.
 */
import type { Attributes, PolicyRule } from './types.js';

export const All = '*';

const has = (set: readonly string[] | undefined, item: string): boolean => !!set && set.includes(item);

export function verbMatches(rule: PolicyRule, verb: string): boolean {
  return has(rule.verbs, All) || has(rule.verbs, verb);
}

export function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  return has(rule.apiGroups, All) || has(rule.apiGroups, group);
}

/** `pods` does not cover `pods/log`; `*​/log` covers any resource's `log`; `*` covers everything. */
export function resourceMatches(rule: PolicyRule, resource: string, subresource: string): boolean {
  const resources = rule.resources ?? [];
  const combined = subresource === '' ? resource : `${resource}/${subresource}`;
  for (const r of resources) {
    if (r === All || r === combined) return true;
    if (subresource !== '' && r === `*/${subresource}`) return true;
  }
  return false;
}

/** An empty list matches any name; a non-empty list never matches a request without a name. */
export function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  const names = rule.resourceNames ?? [];
  if (names.length === 0) return true;
  return name !== '' && names.includes(name);
}

export function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  for (const url of rule.nonResourceURLs ?? []) {
    if (url === All || url === path) return true;
    if (url.endsWith('*') && path.startsWith(url.slice(0, -1))) return true;
  }
  return false;
}

/** Upstream RuleAllows. */
export function ruleAllows(attributes: Attributes, rule: PolicyRule): boolean {
  if (attributes.resourceRequest) {
    return (
      verbMatches(rule, attributes.verb) &&
      apiGroupMatches(rule, attributes.apiGroup) &&
      resourceMatches(rule, attributes.resource, attributes.subresource) &&
      resourceNameMatches(rule, attributes.name)
    );
  }
  return verbMatches(rule, attributes.verb) && nonResourceURLMatches(rule, attributes.path);
}

export function rulesAllow(attributes: Attributes, rules: readonly PolicyRule[]): boolean {
  return rules.some((rule) => ruleAllows(attributes, rule));
}

// ----- coverage (escalation prevention) -----

/** Splits a rule into atomic rules: one (group, resource, verb[, name]) or (url, verb) each. */
export function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const atoms: PolicyRule[] = [];
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of rule.verbs) {
        const names = rule.resourceNames ?? [];
        if (names.length > 0) {
          for (const name of names) atoms.push({ apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [name] });
        } else {
          atoms.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
        }
      }
    }
  }
  for (const url of rule.nonResourceURLs ?? []) {
    for (const verb of rule.verbs) atoms.push({ nonResourceURLs: [url], verbs: [verb] });
  }
  return atoms;
}

const hasAll = (set: readonly string[] | undefined, items: readonly string[] | undefined): boolean =>
  (items ?? []).every((item) => has(set, item));

function resourcesCoverAll(owner: readonly string[] | undefined, requested: readonly string[] | undefined): boolean {
  if (has(owner, All) || hasAll(owner, requested)) return true;
  for (const path of requested ?? []) {
    if (has(owner, path)) continue;
    const slash = path.indexOf('/');
    if (slash < 0 || !has(owner, `*/${path.slice(slash + 1)}`)) return false;
  }
  return true;
}

function nonResourceURLsCoverAll(owner: readonly string[] | undefined, requested: readonly string[] | undefined): boolean {
  return (requested ?? []).every((path) =>
    (owner ?? []).some((o) => o === path || (o.endsWith('*') && path.startsWith(o.replace(/\*+$/, '')))),
  );
}

export function ruleCovers(owner: PolicyRule, atom: PolicyRule): boolean {
  const ownerNames = owner.resourceNames ?? [];
  const atomNames = atom.resourceNames ?? [];
  const namesMatch = atomNames.length === 0 ? ownerNames.length === 0 : ownerNames.length === 0 || hasAll(ownerNames, atomNames);
  return (
    (has(owner.verbs, All) || hasAll(owner.verbs, atom.verbs)) &&
    (has(owner.apiGroups, All) || hasAll(owner.apiGroups, atom.apiGroups)) &&
    resourcesCoverAll(owner.resources, atom.resources) &&
    nonResourceURLsCoverAll(owner.nonResourceURLs, atom.nonResourceURLs) &&
    namesMatch
  );
}

/** Whether `ownerRules` cover every atomic piece of `requested`; the pieces they miss otherwise. */
export function covers(ownerRules: readonly PolicyRule[], requested: readonly PolicyRule[]): { covered: boolean; missing: PolicyRule[] } {
  const missing: PolicyRule[] = [];
  for (const rule of requested) {
    for (const atom of breakdownRule(rule)) {
      if (!ownerRules.some((owner) => ruleCovers(owner, atom))) missing.push(atom);
    }
  }
  return { covered: missing.length === 0, missing };
}

/** Merges atomic rules that differ only by verb (upstream CompactRules). */
export function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const compacted: PolicyRule[] = [];
  const simple = new Map<string, { apiGroups: string[]; resources: string[]; resourceNames?: string[]; verbs: string[] }>();
  for (const rule of rules) {
    const names = rule.resourceNames ?? [];
    const isSimple =
      (rule.nonResourceURLs ?? []).length === 0 && (rule.apiGroups ?? []).length === 1 && (rule.resources ?? []).length === 1 && names.length <= 1;
    if (!isSimple) {
      compacted.push(rule);
      continue;
    }
    const key = JSON.stringify([rule.apiGroups![0], rule.resources![0], names.length > 0, names[0] ?? '']);
    const existing = simple.get(key);
    if (existing) existing.verbs.push(...rule.verbs);
    else simple.set(key, { apiGroups: [...rule.apiGroups!], resources: [...rule.resources!], ...(names.length ? { resourceNames: [...names] } : {}), verbs: [...rule.verbs] });
  }
  compacted.push(...simple.values());
  return compacted;
}

const plainText = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** Go's `%q` of a string. */
export function goQuote(s: string): string {
  if (plainText.test(s)) return `"${s}"`;
  let out = '"';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return out + '"';
}

/** Go's `%q` of a []string: `["a" "b"]`. */
export function goQuoteList(items: readonly string[]): string {
  return `[${items.map(goQuote).join(' ')}]`;
}

/** Upstream PolicyRule.CompactString: `{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}`. */
export function compactString(rule: PolicyRule): string {
  const parts: string[] = [];
  if (rule.apiGroups?.length) parts.push(`APIGroups:${goQuoteList(rule.apiGroups)}`);
  if (rule.resources?.length) parts.push(`Resources:${goQuoteList(rule.resources)}`);
  if (rule.nonResourceURLs?.length) parts.push(`NonResourceURLs:${goQuoteList(rule.nonResourceURLs)}`);
  if (rule.resourceNames?.length) parts.push(`ResourceNames:${goQuoteList(rule.resourceNames)}`);
  if (rule.verbs.length) parts.push(`Verbs:${goQuoteList(rule.verbs)}`);
  return `{${parts.join(', ')}}`;
}

/** Go's utilerrors aggregate text: one message as is, several deduplicated in brackets. */
export function aggregateMessage(messages: readonly string[]): string {
  const unique = [...new Set(messages)];
  return unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]`;
}
