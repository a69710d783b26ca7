/**
 * Dynamic admission: the MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins of the
 * admission chain (kube.md §6). Configurations are compiled when they change (a watch on their
 * stores), not per request. Mutating webhooks run serially — configurations sorted by name, webhooks
 * in list order — each JSON Patch applied before the next call, with one re-invocation of
 * `reinvocationPolicy: IfNeeded` webhooks when a later one changed the object; validating webhooks
 * run in parallel and the first failure in order wins.
 */
import { randomUUID } from 'node:crypto';
import fastJsonPatch from 'fast-json-patch';
import { isDeepStrictEqual } from 'node:util';
import type { Logger } from '../../common/log.js';
import type { Storage, Watcher } from '../../storage/types.js';
import type { AdmissionAttributes, AdmissionPlugin } from '../admission.js';
import { badRequest, internalError, notFound, StatusError, type StatusReason } from '../errors.js';
import type { KubeObject } from '../object.js';
import { Store } from '../registry/store.js';
import type { ResourceTable } from '../resources/index.js';
import { post, resolveTarget, type ServiceDirectory } from './client.js';
import { isExempt, matchRules, objectSelectorMatches, selectorMatches } from './matching.js';
import { buildReview, CallError, readResponse, reviewVersionFor, type WebhookResponse } from './review.js';
import { compileConfiguration, type Webhook, type WebhookKind } from './webhook.js';

const { applyPatch } = fastJsonPatch;

export interface WebhookAdmissionOptions {
  readonly storage: Storage;
  readonly resources: ResourceTable;
  readonly logger: Logger;
}

export class WebhookAdmission {
  readonly mutating: AdmissionPlugin;
  readonly validating: AdmissionPlugin;
  private readonly configurations: Record<WebhookKind, ConfigurationCache>;
  private readonly namespaces: Store;
  private readonly directory: ServiceDirectory;

  private constructor(private readonly options: WebhookAdmissionOptions) {
    const store = (group: string, version: string, resource: string) => new Store(options.storage, options.resources.lookup(group, version, resource)!);
    this.configurations = {
      mutating: new ConfigurationCache('mutating', store('admissionregistration.k8s.io', 'v1', 'mutatingwebhookconfigurations'), options.logger),
      validating: new ConfigurationCache('validating', store('admissionregistration.k8s.io', 'v1', 'validatingwebhookconfigurations'), options.logger),
    };
    this.namespaces = store('', 'v1', 'namespaces');
    const services = store('', 'v1', 'services');
    const endpoints = store('', 'v1', 'endpoints');
    this.directory = {
      service: (namespace, name) => services.find(namespace, name),
      endpoints: (namespace, name) => endpoints.find(namespace, name),
    };
    this.mutating = { name: 'MutatingAdmissionWebhook', admit: (attributes) => this.admit(attributes) };
    this.validating = { name: 'ValidatingAdmissionWebhook', validate: (attributes) => this.validate(attributes) };
  }

  /** Load the configurations and keep following them. */
  static async start(options: WebhookAdmissionOptions): Promise<WebhookAdmission> {
    const admission = new WebhookAdmission(options);
    await Promise.all([admission.configurations.mutating.start(), admission.configurations.validating.start()]);
    return admission;
  }

  close(): void {
    this.configurations.mutating.close();
    this.configurations.validating.close();
  }

  private async admit(attributes: AdmissionAttributes): Promise<KubeObject | undefined> {
    if (isExempt(attributes.type)) return undefined;
    const hooks = this.configurations.mutating.webhooks;
    if (hooks.length === 0) return undefined;
    const context = new RequestContext(attributes, this.namespaces);
    let current = attributes;
    let changed = false;
    /** For each IfNeeded webhook that ran: the object it saw. */
    const seen = new Map<Webhook, KubeObject | undefined>();
    const runOnce = async (webhook: Webhook): Promise<void> => {
      const version = await context.matches(webhook, current);
      if (!version) return;
      const response = await this.call(webhook, current, version);
      if (webhook.reinvocationPolicy === 'IfNeeded') seen.set(webhook, current.object);
      if (!response?.patch?.length) return;
      if (!current.object || current.operation === 'DELETE' || current.operation === 'CONNECT') {
        throw new StatusError(500, 'InternalError', `admission webhook "${webhook.name}" attempted to modify the object, which is not supported for this operation`);
      }
      const patched = applyWebhookPatch(webhook, current.object, response.patch, attributes);
      if (!isDeepStrictEqual(patched, current.object)) {
        current = { ...current, object: patched };
        changed = true;
      }
    };
    for (const webhook of hooks) await runOnce(webhook);
    for (const [webhook, object] of [...seen]) {
      if (!isDeepStrictEqual(object, current.object)) await runOnce(webhook);
    }
    return changed ? current.object : undefined;
  }

  private async validate(attributes: AdmissionAttributes): Promise<void> {
    if (isExempt(attributes.type)) return;
    const hooks = this.configurations.validating.webhooks;
    if (hooks.length === 0) return;
    const context = new RequestContext(attributes, this.namespaces);
    const outcomes = await Promise.allSettled(
      hooks.map(async (webhook) => {
        const version = await context.matches(webhook, attributes);
        if (version) await this.call(webhook, attributes, version);
      }),
    );
    const failure = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failure) throw failure.reason;
  }

  /** Call one webhook: a denial throws its Status; a calling failure throws or is ignored per failurePolicy. */
  private async call(webhook: Webhook, attributes: AdmissionAttributes, version: string): Promise<WebhookResponse | undefined> {
    if (attributes.dryRun && webhook.sideEffects !== 'None' && webhook.sideEffects !== 'NoneOnDryRun') {
      throw badRequest(`admission webhook "${webhook.name}" does not support dry run`);
    }
    let response: WebhookResponse;
    try {
      const reviewVersion = reviewVersionFor(webhook);
      if (!reviewVersion) throw new CallError('webhook does not accept known AdmissionReview versions (v1, v1beta1)');
      const uid = randomUUID();
      const target = await resolveTarget(webhook.clientConfig, webhook.timeoutSeconds, this.directory);
      const answer = await post(target, webhook.clientConfig.caBundle, buildReview(reviewVersion, uid, attributes, version), webhook.timeoutSeconds);
      response = readResponse(reviewVersion, uid, answer, webhook);
    } catch (error) {
      if (!(error instanceof CallError)) throw error;
      if (webhook.failurePolicy === 'Ignore') {
        this.options.logger.warn({ webhook: webhook.name, err: error.message }, `failed calling webhook, failing open ${webhook.name}`);
        return undefined;
      }
      throw internalError(`failed calling webhook "${webhook.name}": ${error.message}`);
    }
    for (const warning of response.warnings) attributes.warn?.(warning);
    if (!response.allowed) throw denial(webhook, response);
    return response;
  }
}

/** `admission webhook "<name>" denied the request: <message>` with the webhook's code (≥400, else 400) and reason. */
function denial(webhook: Webhook, response: WebhookResponse): StatusError {
  const status = response.status ?? {};
  const why = status.message ? `: ${status.message}` : status.reason ? `: ${status.reason}` : ' without explanation';
  const code = status.code !== undefined && status.code >= 400 ? status.code : 400;
  return new StatusError(code, (status.reason ?? '') as StatusReason, `admission webhook "${webhook.name}" denied the request${why}`);
}

function applyWebhookPatch(webhook: Webhook, object: KubeObject, patch: fastJsonPatch.Operation[], attributes: AdmissionAttributes): KubeObject {
  try {
    const patched = applyPatch(structuredClone(object), patch, true, false).newDocument as KubeObject;
    // The webhook saw the object at its own version; it is stored as it came.
    return { ...patched, apiVersion: object.apiVersion, kind: object.kind };
  } catch (error) {
    throw internalError(`admission webhook "${webhook.name}" returned a JSON Patch that does not apply to ${attributes.type.resource} "${attributes.name}": ${(error as Error).message.split('\n')[0]}`);
  }
}

/** Per-request facts shared by every webhook: the namespace's labels, looked up once. */
class RequestContext {
  private namespaceLabels?: Promise<Record<string, string> | undefined>;

  constructor(
    private readonly attributes: AdmissionAttributes,
    private readonly namespaces: Store,
  ) {}

  /** The version the webhook sees the request at, or undefined when it does not want it. */
  async matches(webhook: Webhook, attributes: AdmissionAttributes): Promise<string | undefined> {
    const version = matchRules(webhook, attributes);
    if (!version || !objectSelectorMatches(webhook, attributes)) return undefined;
    const selector = webhook.namespaceSelector;
    if (!selector.matchLabels && !selector.matchExpressions) return version;
    const { type } = attributes;
    const isNamespace = type.group === '' && type.resource === 'namespaces';
    if (!type.namespaced && !isNamespace) return version;
    const labels = isNamespace ? (attributes.object ?? attributes.oldObject)?.metadata.labels : await this.labelsOfNamespace();
    return selectorMatches(selector, labels) ? version : undefined;
  }

  private labelsOfNamespace(): Promise<Record<string, string> | undefined> {
    this.namespaceLabels ??= this.namespaces.find('', this.attributes.namespace).then((namespace) => {
      if (!namespace) throw notFound({ group: '', resource: 'namespaces' }, this.attributes.namespace);
      return namespace.metadata.labels ?? {};
    });
    return this.namespaceLabels;
  }
}

/** The webhooks of one kind, recompiled whenever a configuration changes. */
class ConfigurationCache {
  private readonly byConfiguration = new Map<string, Webhook[]>();
  private watcher?: Watcher;
  private closed = false;
  /** Every webhook, configurations sorted by name, each in list order. */
  webhooks: readonly Webhook[] = [];

  constructor(
    private readonly kind: WebhookKind,
    private readonly store: Store,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    this.byConfiguration.clear();
    const revision = await this.store.currentRevision();
    let page = await this.store.list('', { resourceVersion: revision });
    for (;;) {
      for (const object of page.items) this.byConfiguration.set(object.metadata.name!, compileConfiguration(this.kind, object));
      if (!page.continue) break;
      page = await this.store.list('', { continue: page.continue });
    }
    this.rebuild();
    this.watcher = await this.store.watch(
      '',
      Number(page.resourceVersion || revision),
      (events) => {
        for (const event of events) {
          const name = event.object.metadata.name!;
          if (event.type === 'DELETED') this.byConfiguration.delete(name);
          else this.byConfiguration.set(name, compileConfiguration(this.kind, event.object));
        }
        this.rebuild();
      },
      (error) => {
        if (this.closed) return;
        this.logger.warn({ err: error.message }, `${this.kind} webhook configurations: watch lost, reloading`);
        this.watcher?.close();
        void this.start().catch((e: unknown) => this.logger.error({ err: (e as Error).message }, 'cannot reload webhook configurations'));
      },
    );
  }

  close(): void {
    this.closed = true;
    this.watcher?.close();
  }

  private rebuild(): void {
    this.webhooks = [...this.byConfiguration.keys()].sort().flatMap((name) => this.byConfiguration.get(name)!);
  }
}
