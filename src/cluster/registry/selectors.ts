/**
 * `labelSelector` and `fieldSelector` query parameters: parsed once per request into a predicate,
 * with apimachinery's error texts for bad input (400 BadRequest at the edge).
 */
import { badRequest } from '../errors.js';
import type { KubeObject } from '../object.js';
import type { ResourceType } from '../resources/types.js';

export type Predicate = (object: KubeObject) => boolean;

interface Requirement {
  readonly key: string;
  readonly op: 'in' | 'notin' | 'exists' | '!' | '=' | '!=';
  readonly values: readonly string[];
}

const KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Split on commas outside parentheses. */
function splitTerms(text: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      terms.push(text.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(text.slice(start));
  return terms.map((t) => t.trim());
}

export function parseLabelSelector(text: string): Requirement[] {
  if (text.trim() === '') return [];
  return splitTerms(text).map((term) => {
    let m: RegExpExecArray | null;
    if ((m = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(term))) {
      const values = m[3]!.split(',').map((v) => v.trim());
      return checked({ key: m[1]!, op: m[2] as 'in' | 'notin', values }, text);
    }
    if ((m = /^!\s*(\S+)$/.exec(term))) return checked({ key: m[1]!, op: '!', values: [] }, text);
    if ((m = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(term))) {
      return checked({ key: m[1]!, op: m[2] === '!=' ? '!=' : '=', values: [m[3]!] }, text);
    }
    if ((m = /^([^=!\s(),]+)$/.exec(term))) return checked({ key: m[1]!, op: 'exists', values: [] }, text);
    throw badRequest(`unable to parse requirement: found '${term}', expected: in, notin, =, ==, !=, gt, lt`);
  });
}

function checked(requirement: Requirement, _text: string): Requirement {
  if (!KEY.test(requirement.key)) {
    throw badRequest(`unable to parse requirement: values[0][${requirement.key}]: Invalid value: "${requirement.key}": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`);
  }
  for (const value of requirement.values) {
    if (value.length > 63 || !VALUE.test(value)) {
      throw badRequest(`unable to parse requirement: values[0][${requirement.key}]: Invalid value: "${value}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`);
    }
  }
  return requirement;
}

export function matchLabels(requirements: readonly Requirement[], labels: Readonly<Record<string, string>> | undefined): boolean {
  const l = labels ?? {};
  return requirements.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    const value = l[r.key];
    switch (r.op) {
      case 'exists': return has;
      case '!': return !has;
      case '=': return has && value === r.values[0];
      case '!=': return !has || value !== r.values[0];
      case 'in': return has && r.values.includes(value!);
      case 'notin': return !has || !r.values.includes(value!);
    }
  });
}

/** `metav1.LabelSelector` (matchLabels + matchExpressions) as a predicate over labels. */
export function labelSelectorMatches(selector: { matchLabels?: Record<string, string>; matchExpressions?: Array<{ key: string; operator: string; values?: string[] }> } | undefined | null, labels: Record<string, string> | undefined): boolean {
  if (!selector) return false;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(l, e.key);
    const values = e.values ?? [];
    const ok =
      e.operator === 'In' ? has && values.includes(l[e.key]!)
      : e.operator === 'NotIn' ? !has || !values.includes(l[e.key]!)
      : e.operator === 'Exists' ? has
      : e.operator === 'DoesNotExist' ? !has
      : false;
    if (!ok) return false;
  }
  return true;
}

interface FieldRequirement {
  readonly field: string;
  readonly negate: boolean;
  readonly value: string;
}

export function parseFieldSelector(text: string, type: ResourceType): FieldRequirement[] {
  if (text.trim() === '') return [];
  return text.split(',').map((term) => {
    const m = /^([^=!]+)(==|=|!=)(.*)$/.exec(term.trim());
    if (!m) throw badRequest(`invalid selector: '${text}'; can't understand '${term}'`);
    const fieldName = m[1]!.trim();
    if (fieldName !== 'metadata.name' && fieldName !== 'metadata.namespace' && !type.selectableFields?.[fieldName]) {
      throw badRequest(`field label not supported: ${fieldName}`);
    }
    return { field: fieldName, negate: m[2] === '!=', value: m[3]!.trim() };
  });
}

function fieldValue(object: KubeObject, name: string, type: ResourceType): string {
  if (name === 'metadata.name') return object.metadata.name ?? '';
  if (name === 'metadata.namespace') return object.metadata.namespace ?? '';
  return type.selectableFields![name]!(object);
}

/** One predicate from both query parameters; `undefined` when neither restricts anything. */
export function selectorPredicate(type: ResourceType, labelSelector: string | undefined, fieldSelector: string | undefined): Predicate | undefined {
  const labels = parseLabelSelector(labelSelector ?? '');
  const fields = parseFieldSelector(fieldSelector ?? '', type);
  if (labels.length === 0 && fields.length === 0) return undefined;
  return (object) =>
    matchLabels(labels, object.metadata.labels) &&
    fields.every((f) => (fieldValue(object, f.field, type) === f.value) !== f.negate);
}

/** `metadata.name=X` as the sole field selector names one object (kube.md §3.1: authorization uses it). */
export function singleNameFromFieldSelector(fieldSelector: string | undefined): string | undefined {
  const m = /^metadata\.name==?([^,]*)$/.exec(fieldSelector ?? '');
  return m ? m[1] : undefined;
}
