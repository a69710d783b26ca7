/** apimachinery's name and label validators, with their exact messages. */
import { field, type FieldError } from '../errors.js';
import type { KubeObject } from '../object.js';
import type { NameRule } from './types.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

export function nameProblems(name: string, rule: NameRule): string[] {
  switch (rule) {
    case 'dns1123-label':
      return [
        ...(name.length > 63 ? ['must be no more than 63 characters'] : []),
        ...(DNS1123_LABEL.test(name) ? [] : [LABEL_MSG]),
      ];
    case 'dns1123-subdomain':
      return [
        ...(name.length > 253 ? ['must be no more than 253 characters'] : []),
        ...(DNS1123_SUBDOMAIN.test(name) ? [] : [SUBDOMAIN_MSG]),
      ];
    case 'path-segment':
      if (name === '.' || name === '..') return [`may not be '${name}'`];
      for (const bad of ['/', '%']) if (name.includes(bad)) return [`may not contain '${bad}'`];
      return [];
  }
}

/** Validate metadata common to every kind: name (or generateName), namespace, labels, annotations. */
export function validateObjectMeta(object: KubeObject, rule: NameRule, namespaced: boolean): FieldError[] {
  const errors: FieldError[] = [];
  const meta = object.metadata;
  const name = meta.name;
  if (!name) {
    if (!meta.generateName) errors.push(field.required('metadata.name', 'name or generateName is required'));
  } else {
    for (const problem of nameProblems(name, rule)) errors.push(field.invalid('metadata.name', name, problem));
  }
  if (namespaced && !meta.namespace) errors.push(field.required('metadata.namespace'));
  if (!namespaced && meta.namespace) errors.push(field.forbidden('metadata.namespace', 'not allowed on this type'));
  for (const [key, value] of Object.entries(meta.labels ?? {})) {
    for (const problem of qualifiedNameProblems(key)) errors.push(field.invalid('metadata.labels', key, problem));
    if (typeof value !== 'string' || value.length > 63 || !LABEL_VALUE.test(value)) {
      errors.push(
        field.invalid(
          'metadata.labels',
          value,
          "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        ),
      );
    }
  }
  for (const key of Object.keys(meta.annotations ?? {})) {
    for (const problem of qualifiedNameProblems(key.toLowerCase())) errors.push(field.invalid('metadata.annotations', key, problem));
  }
  return errors;
}

export function qualifiedNameProblems(key: string): string[] {
  const slash = key.indexOf('/');
  const name = slash < 0 ? key : key.slice(slash + 1);
  const prefix = slash < 0 ? '' : key.slice(0, slash);
  const problems: string[] = [];
  if (slash >= 0 && (prefix.length === 0 || !DNS1123_SUBDOMAIN.test(prefix))) problems.push(`prefix part ${SUBDOMAIN_MSG}`);
  if (name.length === 0 || name.length > 63 || !QUALIFIED_NAME.test(name)) {
    problems.push(
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    );
  }
  return problems;
}
