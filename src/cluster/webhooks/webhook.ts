/**
 * One admission webhook as the dispatcher uses it: compiled once from a stored
 * Validating/MutatingWebhookConfiguration (which carries every default of the version it was
 * written at, kube.md §6.1) and rebuilt only when configurations change.
 */
import { isPlainObject, type JsonObject, type KubeObject } from '../object.js';

export type WebhookKind = 'validating' | 'mutating';

export interface RuleWithOperations {
  readonly operations: readonly string[];
  readonly apiGroups: readonly string[];
  readonly apiVersions: readonly string[];
  readonly resources: readonly string[];
  readonly scope: '*' | 'Cluster' | 'Namespaced';
}

export interface LabelSelector {
  readonly matchLabels?: Record<string, string>;
  readonly matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}

export interface ClientConfig {
  readonly url?: string;
  readonly service?: { readonly namespace: string; readonly name: string; readonly path?: string; readonly port: number };
  /** PEM text decoded from the base64 `caBundle`; undefined means the system roots. */
  readonly caBundle?: string;
}

export interface Webhook {
  readonly kind: WebhookKind;
  /** The configuration object's name (configurations run sorted by it). */
  readonly configuration: string;
  /** Index within the configuration's `webhooks` list. */
  readonly index: number;
  readonly name: string;
  readonly clientConfig: ClientConfig;
  readonly rules: readonly RuleWithOperations[];
  readonly failurePolicy: 'Fail' | 'Ignore';
  readonly matchPolicy: 'Exact' | 'Equivalent';
  readonly namespaceSelector: LabelSelector;
  readonly objectSelector: LabelSelector;
  readonly sideEffects: string;
  readonly timeoutSeconds: number;
  readonly admissionReviewVersions: readonly string[];
  readonly reinvocationPolicy: 'Never' | 'IfNeeded';
}

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);

/** Every webhook of one configuration, in list order. */
export function compileConfiguration(kind: WebhookKind, configuration: KubeObject): Webhook[] {
  const hooks = Array.isArray(configuration.webhooks) ? (configuration.webhooks as unknown[]) : [];
  return hooks.filter(isPlainObject).map((hook: JsonObject, index): Webhook => {
    const client = isPlainObject(hook.clientConfig) ? hook.clientConfig : {};
    const service = isPlainObject(client.service) ? client.service : undefined;
    return {
      kind,
      configuration: configuration.metadata.name ?? '',
      index,
      name: String(hook.name ?? ''),
      clientConfig: {
        url: typeof client.url === 'string' ? client.url : undefined,
        service: service
          ? {
              namespace: String(service.namespace ?? ''),
              name: String(service.name ?? ''),
              path: typeof service.path === 'string' ? service.path : undefined,
              port: typeof service.port === 'number' ? service.port : 443,
            }
          : undefined,
        caBundle: typeof client.caBundle === 'string' && client.caBundle ? Buffer.from(client.caBundle, 'base64').toString('utf8') : undefined,
      },
      rules: (Array.isArray(hook.rules) ? hook.rules : []).filter(isPlainObject).map((rule) => ({
        operations: strings(rule.operations),
        apiGroups: strings(rule.apiGroups),
        apiVersions: strings(rule.apiVersions),
        resources: strings(rule.resources),
        scope: rule.scope === 'Cluster' || rule.scope === 'Namespaced' ? rule.scope : '*',
      })),
      failurePolicy: hook.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
      matchPolicy: hook.matchPolicy === 'Exact' ? 'Exact' : 'Equivalent',
      namespaceSelector: isPlainObject(hook.namespaceSelector) ? (hook.namespaceSelector as LabelSelector) : {},
      objectSelector: isPlainObject(hook.objectSelector) ? (hook.objectSelector as LabelSelector) : {},
      sideEffects: String(hook.sideEffects ?? 'Unknown'),
      timeoutSeconds: typeof hook.timeoutSeconds === 'number' ? hook.timeoutSeconds : 10,
      admissionReviewVersions: strings(hook.admissionReviewVersions),
      reinvocationPolicy: hook.reinvocationPolicy === 'IfNeeded' ? 'IfNeeded' : 'Never',
    };
  });
}
