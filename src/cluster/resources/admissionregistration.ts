/**
 * `admissionregistration.k8s.io` v1 and v1beta1 webhook configurations. One stored object serves
 * both versions (G13); each version's defaults are applied when the object is written through it,
 * so a configuration created at v1beta1 keeps `failurePolicy: Ignore`, `timeoutSeconds: 30`, …
 * (kube.md §6.1). Calling the webhooks is the admission chain's job (admission.ts).
 */
import { field, type FieldError } from '../errors.js';
import { isPlainObject, type JsonObject, type KubeObject } from '../object.js';
import { labelSelectorSchema, list, obj, type Schema } from '../api/schema.js';
import { AGE, count } from './columns.js';
import { READ_WRITE, type ResourceType } from './types.js';

export const ADMISSION_GROUP = 'admissionregistration.k8s.io';

const webhookFields = (mutating: boolean): Record<string, Schema> => ({
  name: 'string',
  clientConfig: obj({ url: 'string', service: obj({ namespace: 'string', name: 'string', path: 'string', port: 'integer' }), caBundle: 'string' }),
  rules: list(obj({ operations: list('string'), apiGroups: list('string'), apiVersions: list('string'), resources: list('string'), scope: 'string' })),
  failurePolicy: 'string',
  matchPolicy: 'string',
  namespaceSelector: labelSelectorSchema,
  objectSelector: labelSelectorSchema,
  sideEffects: 'string',
  timeoutSeconds: 'integer',
  admissionReviewVersions: list('string'),
  matchConditions: list(obj({ name: 'string', expression: 'string' })),
  ...(mutating ? { reinvocationPolicy: 'string' } : {}),
});

const VERSION_DEFAULTS: Record<string, Record<string, unknown>> = {
  v1: { failurePolicy: 'Fail', matchPolicy: 'Equivalent', timeoutSeconds: 10 },
  v1beta1: { failurePolicy: 'Ignore', matchPolicy: 'Exact', timeoutSeconds: 30, sideEffects: 'Unknown', admissionReviewVersions: ['v1beta1'] },
};

function defaults(mutating: boolean) {
  return (config: KubeObject, version: string): void => {
    for (const hook of (Array.isArray(config.webhooks) ? config.webhooks : []) as JsonObject[]) {
      if (!isPlainObject(hook)) continue;
      for (const [k, v] of Object.entries(VERSION_DEFAULTS[version] ?? VERSION_DEFAULTS.v1!)) hook[k] ??= structuredClone(v);
      hook.namespaceSelector ??= {};
      hook.objectSelector ??= {};
      if (mutating) hook.reinvocationPolicy ??= 'Never';
      for (const rule of (Array.isArray(hook.rules) ? hook.rules : []) as JsonObject[]) if (isPlainObject(rule)) rule.scope ??= '*';
      const service = (hook.clientConfig as JsonObject | undefined)?.service as JsonObject | undefined;
      if (isPlainObject(service)) service.port ??= 443;
    }
  };
}

const WEBHOOK_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function validate(config: KubeObject, _old: KubeObject | undefined, version: string): FieldError[] {
  const errors: FieldError[] = [];
  const names = new Set<string>();
  ((config.webhooks ?? []) as JsonObject[]).forEach((hook, i) => {
    if (!isPlainObject(hook)) return;
    const at = `webhooks[${i}]`;
    const name = hook.name;
    if (typeof name !== 'string' || name === '') errors.push(field.required(`${at}.name`));
    else if (name.split('.').length < 3) errors.push(field.invalid(`${at}.name`, name, 'should be a domain with at least three segments separated by dots'));
    else if (!WEBHOOK_NAME.test(name)) errors.push(field.invalid(`${at}.name`, name, "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"));
    else if (names.has(name)) errors.push(field.duplicate(`${at}.name`, name));
    else names.add(name);
    const client = hook.clientConfig as JsonObject | undefined;
    if (!isPlainObject(client) || (client.url === undefined && client.service === undefined)) {
      errors.push(field.required(`${at}.clientConfig`, 'exactly one of url or service is required'));
    } else if (client.url !== undefined && client.service !== undefined) {
      errors.push(field.required(`${at}.clientConfig`, 'exactly one of url or service is required'));
    } else if (typeof client.url === 'string') {
      let url: URL | undefined;
      try {
        url = new URL(client.url);
      } catch {
        errors.push(field.invalid(`${at}.clientConfig.url`, client.url, 'host must be specified'));
      }
      if (url && url.protocol !== 'https:') errors.push(field.invalid(`${at}.clientConfig.url`, url.protocol.replace(/:$/, ''), "'https' is the only allowed URL scheme"));
      if (url && (url.username || url.password)) errors.push(field.invalid(`${at}.clientConfig.url`, client.url, 'user information is not permitted in the URL'));
      if (url && (url.hash || url.search)) errors.push(field.invalid(`${at}.clientConfig.url`, client.url, 'fragments and query parameters are not permitted in the URL'));
    }
    const sideEffects = hook.sideEffects;
    const allowedSideEffects = version === 'v1beta1' ? ['None', 'NoneOnDryRun', 'Some', 'Unknown'] : ['None', 'NoneOnDryRun'];
    if (sideEffects === undefined) errors.push(field.required(`${at}.sideEffects`, 'must specify one of None, NoneOnDryRun'));
    else if (!allowedSideEffects.includes(String(sideEffects))) errors.push(field.notSupported(`${at}.sideEffects`, sideEffects, allowedSideEffects));
    const reviewVersions = hook.admissionReviewVersions as unknown[] | undefined;
    if (!Array.isArray(reviewVersions) || reviewVersions.length === 0) errors.push(field.required(`${at}.admissionReviewVersions`, 'must specify one of v1, v1beta1'));
    else if (!reviewVersions.some((v) => v === 'v1' || v === 'v1beta1')) errors.push(field.invalid(`${at}.admissionReviewVersions`, reviewVersions, 'must include at least one of v1, v1beta1'));
    const timeout = hook.timeoutSeconds;
    if (typeof timeout === 'number' && (timeout < 1 || timeout > 30)) errors.push(field.invalid(`${at}.timeoutSeconds`, timeout, 'the timeout value must be between 1 and 30 seconds'));
    if (!['Ignore', 'Fail'].includes(String(hook.failurePolicy))) errors.push(field.notSupported(`${at}.failurePolicy`, hook.failurePolicy, ['Fail', 'Ignore']));
    if (!['Exact', 'Equivalent'].includes(String(hook.matchPolicy))) errors.push(field.notSupported(`${at}.matchPolicy`, hook.matchPolicy, ['Equivalent', 'Exact']));
    ((hook.rules ?? []) as JsonObject[]).forEach((rule, j) => {
      const ops = rule.operations as unknown[] | undefined;
      const allowedOps = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
      if (!Array.isArray(ops) || ops.length === 0) errors.push(field.required(`${at}.rules[${j}].operations`));
      else ops.forEach((op, k) => { if (!allowedOps.includes(String(op))) errors.push(field.notSupported(`${at}.rules[${j}].operations[${k}]`, op, allowedOps)); });
      if (!['*', 'Cluster', 'Namespaced'].includes(String(rule.scope))) errors.push(field.notSupported(`${at}.rules[${j}].scope`, rule.scope, ['*', 'Cluster', 'Namespaced']));
    });
  });
  return errors;
}

function configuration(kind: 'ValidatingWebhookConfiguration' | 'MutatingWebhookConfiguration'): ResourceType {
  const mutating = kind === 'MutatingWebhookConfiguration';
  const resource = `${kind.toLowerCase()}s`;
  return {
    group: ADMISSION_GROUP,
    versions: ['v1', 'v1beta1'],
    storageVersion: 'v1',
    resource,
    singular: kind.toLowerCase(),
    kind,
    listKind: `${kind}List`,
    namespaced: false,
    verbs: READ_WRITE,
    categories: ['api-extensions'],
    nameRule: 'dns1123-subdomain',
    schema: obj({ webhooks: list(obj(webhookFields(mutating))) }),
    defaults: defaults(mutating),
    validate,
    mergeKeys: { webhooks: 'name' },
    columns: [{ name: 'Webhooks', type: 'integer', description: 'Webhooks is a list of webhooks and the affected resources and operations.', priority: 0, cell: (c) => count(c.webhooks) }, AGE],
  };
}

export const admissionRegistrationResources: readonly ResourceType[] = [
  configuration('ValidatingWebhookConfiguration'),
  configuration('MutatingWebhookConfiguration'),
];
