/**
 * kube-mgmt's ConfigMap loading: a ConfigMap labelled as policy (`openpolicyagent.org/policy=rego`)
 * loads each key as policy `<namespace>/<name>/<key>`; one labelled as data
 * (`openpolicyagent.org/data=opa`, checked first) loads each key, a JSON object, at data
 * `<namespace>/<name>/<key>`. The outcome is written back to the ConfigMap as the annotation
 * `openpolicyagent.org/kube-mgmt-status` (`{"status":"ok"}` or `{"status":"error","error":…}`),
 * with a retry counter; a policy that failed (for example because it imports one not loaded yet)
 * is tried again after another ConfigMap loads, up to `maxRetries` times.
 */
import { createHash } from 'node:crypto';
import type { Logger } from '../common/log.js';
import { EngineRequestError, jsonPointer, type PolicyEngine } from './engine.js';
import type { KubeClient, KubeObject } from './kube.js';
import type { ReflectorHandler } from './reflector.js';

export interface ConfigMapLabels {
  readonly policyLabel: string;
  readonly policyValue: string;
  readonly dataLabel: string;
  readonly dataValue: string;
}

export interface ConfigMapSyncOptions extends ConfigMapLabels {
  readonly enablePolicies: boolean;
  readonly enableData: boolean;
  /** The annotation keys are `<domain>/kube-mgmt-status` and `<domain>/kube-mgmt-retries`. */
  readonly annotationDomain: string;
  readonly maxRetries: number;
}

/** kube-mgmt's defaults: its labels, its annotation domain, two retries, policies and data on. */
export const KUBE_MGMT_DEFAULTS: ConfigMapSyncOptions = {
  policyLabel: 'openpolicyagent.org/policy',
  policyValue: 'rego',
  dataLabel: 'openpolicyagent.org/data',
  dataValue: 'opa',
  enablePolicies: true,
  enableData: true,
  annotationDomain: 'openpolicyagent.org',
  maxRetries: 2,
};

type Kind = 'policy' | 'data';

interface Loaded {
  readonly object: KubeObject;
  readonly kind: Kind;
  readonly keys: readonly string[];
  readonly fingerprint: string;
  failed: boolean;
  retries: number;
}

export class ConfigMapSync implements ReflectorHandler {
  private readonly loaded = new Map<string, Loaded>();

  constructor(
    private readonly engine: PolicyEngine,
    private readonly kube: KubeClient,
    private readonly options: ConfigMapSyncOptions,
    private readonly logger: Logger,
  ) {}

  async replace(objects: readonly KubeObject[]): Promise<void> {
    const present = new Set(objects.map(keyOf));
    for (const [key, loaded] of [...this.loaded]) if (!present.has(key)) await this.unload(key, loaded);
    for (const object of objects) await this.upsert(object);
  }

  async upsert(object: KubeObject): Promise<void> {
    const key = keyOf(object);
    const kind = this.kindOf(object);
    const previous = this.loaded.get(key);
    if (!kind) {
      if (previous) await this.unload(key, previous);
      return;
    }
    const data = (object.data ?? {}) as Record<string, string>;
    const fingerprint = createHash('sha256').update(kind).update(JSON.stringify(Object.entries(data).sort())).digest('hex');
    // Our own status annotation comes back as an update: nothing to load again.
    if (previous && previous.fingerprint === fingerprint && previous.kind === kind) return;
    if (previous && previous.kind !== kind) await this.unload(key, previous);

    const keys = Object.keys(data).sort();
    const entry: Loaded = { object, kind, keys, fingerprint, failed: false, retries: 0 };
    if (previous?.kind === kind) {
      for (const gone of previous.keys.filter((k) => !keys.includes(k))) {
        if (kind === 'policy') await this.engine.deletePolicy(policyId(object, gone));
      }
    }
    this.loaded.set(key, entry);
    const ok = await this.load(entry);
    if (ok) await this.retryFailed();
  }

  async remove(object: KubeObject): Promise<void> {
    const key = keyOf(object);
    const previous = this.loaded.get(key);
    if (previous) await this.unload(key, previous);
  }

  private kindOf(object: KubeObject): Kind | undefined {
    const labels = object.metadata.labels ?? {};
    if (this.options.enableData && labels[this.options.dataLabel] === this.options.dataValue) return 'data';
    if (this.options.enablePolicies && labels[this.options.policyLabel] === this.options.policyValue) return 'policy';
    return undefined;
  }

  /** Load every key; write the status annotation; true when all keys loaded. */
  private async load(entry: Loaded): Promise<boolean> {
    const { object } = entry;
    const data = (object.data ?? {}) as Record<string, string>;
    const errors: unknown[] = [];
    for (const key of entry.keys) {
      try {
        if (entry.kind === 'policy') {
          await this.engine.putPolicy(policyId(object, key), data[key]!);
        } else {
          const value = parseDataObject(data[key]!);
          await this.engine.putData([object.metadata.namespace ?? '', object.metadata.name, key], value);
        }
      } catch (error) {
        errors.push(error instanceof EngineRequestError ? error.error : (error as Error).message);
      }
    }
    entry.failed = errors.length > 0;
    const status = entry.failed ? { status: 'error', error: errors.length === 1 ? errors[0] : errors } : { status: 'ok' };
    if (entry.failed) this.logger.warn({ configmap: keyOf(object), errors }, 'configmap failed to load');
    else this.logger.info({ configmap: keyOf(object), kind: entry.kind }, 'configmap loaded');
    await this.writeStatus(object, status, entry.retries);
    return !entry.failed;
  }

  /** After a successful load, policies that failed before may now compile (they may have imported it). */
  private async retryFailed(): Promise<void> {
    for (const entry of this.loaded.values()) {
      if (!entry.failed || entry.retries >= this.options.maxRetries) continue;
      entry.retries += 1;
      if (await this.load(entry)) return this.retryFailed();
    }
  }

  private async unload(key: string, loaded: Loaded): Promise<void> {
    this.loaded.delete(key);
    const { namespace = '', name } = loaded.object.metadata;
    try {
      if (loaded.kind === 'policy') {
        for (const dataKey of loaded.keys) await this.engine.deletePolicy(policyId(loaded.object, dataKey));
      } else {
        await this.engine.patchData([{ op: 'remove', path: jsonPointer([namespace, name]) }]);
      }
      this.logger.info({ configmap: key }, 'configmap unloaded');
    } catch (error) {
      this.logger.error({ configmap: key, err: (error as Error).message }, 'configmap unload failed');
    }
  }

  private async writeStatus(object: KubeObject, status: unknown, retries: number): Promise<void> {
    const { namespace = '', name } = object.metadata;
    const annotations = {
      [`${this.options.annotationDomain}/kube-mgmt-status`]: JSON.stringify(status),
      [`${this.options.annotationDomain}/kube-mgmt-retries`]: String(retries),
    };
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps/${encodeURIComponent(name)}`;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.kube.mergePatch(path, { metadata: { annotations } });
        return;
      } catch (error) {
        if (attempt >= 3) {
          this.logger.error({ configmap: `${namespace}/${name}`, err: (error as Error).message }, 'cannot write status annotation');
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      }
    }
  }
}

function keyOf(object: KubeObject): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name}`;
}

function policyId(object: KubeObject, key: string): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name}/${key}`;
}

function parseDataObject(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`invalid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('data must be a JSON object');
  return value;
}
