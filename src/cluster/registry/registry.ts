/**
 * REST semantics over the generic store, in the order upstream's registry applies them: prepare
 * (system fields, defaults of the request's version), validate (name, metadata, kind strategy),
 * admission, record field ownership, write with compare-and-swap, convert to the request's version.
 * One code path for every kind; kinds differ only by their `ResourceType`.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Storage } from '../../storage/types.js';
import type { AdmissionChain } from '../admission.js';
import type { UserInfo } from '../authn/types.js';
import { recordUpdate, serverSideApply } from '../api/apply.js';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch } from '../api/patch.js';
import { badRequest, conflict, forbidden, invalid, notFound, OBJECT_MODIFIED, StatusError } from '../errors.js';
import { clone, isPlainObject, now, type JsonObject, type KubeObject } from '../object.js';
import type { ResourceTable } from '../resources/index.js';
import { apiVersionOf, type ResourceType } from '../resources/types.js';
import { validateObjectMeta } from '../resources/validation.js';
import type { ValueTransformer } from './encryption.js';
import type { Predicate } from './selectors.js';
import { Store, type ListPage } from './store.js';

export interface WriteContext {
  readonly user: UserInfo;
  /** The version of the request URL; objects come back at it. */
  readonly version: string;
  readonly dryRun: boolean;
  readonly fieldManager: string;
  readonly subresource?: string;
  /** Warnings for the client (admission webhooks'), sent as `Warning: 299` headers. */
  readonly warn?: (text: string) => void;
}

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

/** Namespaces that exist from the start and may never be deleted. */
export const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public'] as const;

const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export class Registry {
  private readonly stores = new Map<ResourceType, Store>();

  constructor(
    readonly storage: Storage,
    readonly resources: ResourceTable,
    private readonly admission: AdmissionChain,
    /** Encryption at rest for the kinds marked `encrypted` (Secrets). */
    encryption?: ValueTransformer,
  ) {
    for (const type of resources.all) if (!type.virtual) this.stores.set(type, new Store(storage, type, type.encrypted ? encryption : undefined));
  }

  store(type: ResourceType): Store {
    const store = this.stores.get(type);
    if (!store) throw new Error(`${type.resource} is not a stored kind`);
    return store;
  }

  /** The object as the client sees it at `version`. */
  present(type: ResourceType, object: KubeObject, version: string): KubeObject {
    return { apiVersion: apiVersionOf(type.group, version), kind: type.kind, ...omit(object, 'apiVersion', 'kind') } as KubeObject;
  }

  async get(type: ResourceType, namespace: string, name: string, version: string): Promise<KubeObject> {
    return this.present(type, await this.store(type).get(namespace, name), version);
  }

  async list(type: ResourceType, namespace: string, version: string, options: { predicate?: Predicate; limit?: number; continue?: string; resourceVersion?: number }): Promise<ListPage> {
    const page = await this.store(type).list(namespace, options);
    return { ...page, items: page.items.map((item) => omit(item, 'apiVersion', 'kind') as KubeObject) };
  }

  /** Create; an empty `fieldManager` means the body's managedFields were already set (server-side apply). */
  async create(type: ResourceType, namespace: string, body: KubeObject, context: WriteContext): Promise<KubeObject> {
    const object = clone(body);
    object.metadata = { ...(object.metadata ?? {}) };
    if (type.namespaced) object.metadata.namespace = namespace;
    await this.requireNamespace(type, namespace);
    if (!object.metadata.name && object.metadata.generateName) {
      object.metadata.name = object.metadata.generateName + Array.from({ length: 5 }, () => GENERATE_ALPHABET[Math.floor(Math.random() * GENERATE_ALPHABET.length)]).join('');
    }
    for (const key of ['uid', 'resourceVersion', 'deletionTimestamp', 'selfLink'] as const) delete object.metadata[key];
    if (context.fieldManager) delete object.metadata.managedFields;
    object.metadata.uid = randomUUID();
    object.metadata.creationTimestamp = now();
    object.metadata.generation = 1;
    if (type.statusField) delete object[type.statusField];
    object.apiVersion = apiVersionOf(type.group, type.storageVersion);
    object.kind = type.kind;
    type.defaults?.(object, context.version);
    this.validate(type, object, undefined, context.version);
    const admitted = (await this.admission.run({ operation: 'CREATE', type, version: context.version, subresource: '', namespace, name: object.metadata.name ?? '', object, user: context.user, dryRun: context.dryRun, warn: context.warn })) ?? object;
    if (context.fieldManager) recordUpdate(admitted, undefined, context.fieldManager, this.fieldContext(type, context));
    const stored = context.dryRun ? admitted : await this.store(type).create(admitted);
    return this.present(type, stored, context.version);
  }

  /** PUT: replace the object (the main resource keeps its status; the status subresource changes only status). */
  async update(type: ResourceType, namespace: string, name: string, body: KubeObject, context: WriteContext): Promise<KubeObject> {
    if (body.metadata?.name && body.metadata.name !== name) throw badRequest(`the name of the object (${body.metadata.name}) does not match the name on the URL (${name})`);
    const current = await this.store(type).get(namespace, name);
    const expected = body.metadata?.resourceVersion;
    if (expected !== undefined && expected !== '' && expected !== current.metadata.resourceVersion) {
      if (!/^\d+$/.test(expected)) throw badRequest(`invalid resourceVersion ${JSON.stringify(expected)}`);
      throw conflict(type, name, OBJECT_MODIFIED);
    }
    return this.write(type, current, clone(body), context);
  }

  /**
   * PATCH (and server-side apply, which creates a missing object). `check` sees the patched object
   * before anything is written (field validation of the result); conflicts with concurrent writers
   * are retried unless the patch pinned a resourceVersion.
   */
  async patch(type: ResourceType, namespace: string, name: string, patchType: PatchType, patch: unknown, context: WriteContext & { force: boolean; check?: (patched: KubeObject) => void }): Promise<{ object: KubeObject; created: boolean }> {
    for (let attempt = 0; ; attempt++) {
      const current = await this.store(type).find(namespace, name);
      if (!current) {
        if (patchType !== 'apply') throw notFound(type, name);
        const config = patch as KubeObject;
        const created = serverSideApply(undefined, config, context.fieldManager, context.force, this.fieldContext(type, context));
        const body = { ...created, metadata: { ...created.metadata, name } };
        return { object: await this.create(type, namespace, body, { ...context, fieldManager: '' }), created: true };
      }
      const visible = this.present(type, current, context.version);
      let next: KubeObject;
      switch (patchType) {
        case 'json':
          next = applyJsonPatch(visible, patch) as KubeObject;
          break;
        case 'merge':
          next = applyMergePatch(visible, patch) as KubeObject;
          break;
        case 'strategic':
          next = applyStrategicMergePatch(visible, patch, type.mergeKeys) as KubeObject;
          break;
        case 'apply':
          next = serverSideApply(visible, patch as KubeObject, context.fieldManager, context.force, this.fieldContext(type, context));
          break;
      }
      if (!isPlainObject(next) || !isPlainObject(next.metadata)) throw badRequest('the patch produced an object without metadata');
      context.check?.(next);
      if (next.metadata.name !== name) throw badRequest(`the name of the object (${String(next.metadata.name)}) does not match the name on the URL (${name})`);
      const pinned = next.metadata.resourceVersion !== current.metadata.resourceVersion;
      if (pinned && next.metadata.resourceVersion !== undefined) throw conflict(type, name, OBJECT_MODIFIED);
      try {
        const object = await this.write(type, current, next, patchType === 'apply' ? { ...context, fieldManager: '' } : context);
        return { object, created: false };
      } catch (error) {
        if (error instanceof StatusError && error.reason === 'Conflict' && error.message.endsWith(OBJECT_MODIFIED) && !pinned && attempt < 5) continue;
        throw error;
      }
    }
  }

  /**
   * Store `next` in place of `current` (compare-and-swap on current's resourceVersion). An empty
   * `fieldManager` means ownership was already recorded (server-side apply).
   */
  private async write(type: ResourceType, current: KubeObject, next: KubeObject, context: WriteContext): Promise<KubeObject> {
    const status = context.subresource === 'status';
    next.metadata = { ...(next.metadata ?? {}) };
    let object: KubeObject;
    if (status && type.statusField) {
      object = { ...clone(current), [type.statusField]: next[type.statusField] };
    } else {
      object = { ...next, apiVersion: apiVersionOf(type.group, type.storageVersion), kind: type.kind };
      if (type.statusField) {
        if (current[type.statusField] === undefined) delete object[type.statusField];
        else object[type.statusField] = current[type.statusField];
      }
      if (next.metadata.managedFields === undefined) object.metadata.managedFields = current.metadata.managedFields;
    }
    for (const key of ['uid', 'creationTimestamp', 'namespace', 'name', 'generation', 'deletionTimestamp'] as const) {
      if (current.metadata[key] === undefined) delete object.metadata[key];
      else object.metadata[key] = current.metadata[key] as never;
    }
    object.metadata.resourceVersion = current.metadata.resourceVersion;
    if (!status) type.defaults?.(object, context.version);
    if (!isDeepStrictEqual(specOf(object, type), specOf(current, type))) object.metadata.generation = (current.metadata.generation ?? 0) + 1;
    this.validate(type, object, current, context.version);
    const admitted = (await this.admission.run({ operation: 'UPDATE', type, version: context.version, subresource: context.subresource ?? '', namespace: current.metadata.namespace ?? '', name: current.metadata.name!, object, oldObject: current, user: context.user, dryRun: context.dryRun, warn: context.warn })) ?? object;
    if (context.fieldManager) recordUpdate(admitted, current, context.fieldManager, this.fieldContext(type, context));
    if (isDeepStrictEqual(withoutVolatile(admitted), withoutVolatile(current))) return this.present(type, current, context.version);
    const stored = context.dryRun ? admitted : await this.store(type).update(admitted, Number(current.metadata.resourceVersion));
    return this.present(type, stored, context.version);
  }

  /** Delete one object; `preconditions` are DeleteOptions.preconditions. Returns the deleted object. */
  async delete(type: ResourceType, namespace: string, name: string, context: WriteContext, preconditions: { uid?: string; resourceVersion?: string } = {}): Promise<KubeObject> {
    if (type.group === '' && type.resource === 'namespaces' && (SYSTEM_NAMESPACES as readonly string[]).includes(name)) {
      throw forbidden(type, name, 'this namespace may not be deleted');
    }
    const current = await this.store(type).get(namespace, name);
    if (preconditions.uid && preconditions.uid !== current.metadata.uid) {
      throw conflict(type, name, `Precondition failed: UID in precondition: ${preconditions.uid}, UID in object meta: ${current.metadata.uid}`);
    }
    if (preconditions.resourceVersion && preconditions.resourceVersion !== current.metadata.resourceVersion) {
      throw conflict(type, name, `Precondition failed: ResourceVersion in precondition: ${preconditions.resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion}`);
    }
    await this.admission.run({ operation: 'DELETE', type, version: context.version, subresource: '', namespace, name, oldObject: current, user: context.user, dryRun: context.dryRun, warn: context.warn });
    if (!context.dryRun) {
      await this.store(type).delete(namespace, name, Number(current.metadata.resourceVersion));
      if (type.group === '' && type.resource === 'namespaces') await this.deleteNamespaceContents(name);
    }
    return this.present(type, current, context.version);
  }

  /** A namespace's objects go with it (no namespace controller runs here, so this happens at once). */
  private async deleteNamespaceContents(namespace: string): Promise<void> {
    for (const [type, store] of this.stores) {
      if (!type.namespaced) continue;
      const page = await store.list(namespace);
      for (const item of page.items) await store.delete(namespace, item.metadata.name!, Number(item.metadata.resourceVersion)).catch(() => undefined);
    }
  }

  async requireNamespace(type: ResourceType, namespace: string): Promise<void> {
    if (!type.namespaced) return;
    const namespaces = this.resources.lookup('', 'v1', 'namespaces')!;
    if (!(await this.store(namespaces).find('', namespace))) throw notFound(namespaces, namespace);
  }

  private validate(type: ResourceType, object: KubeObject, old: KubeObject | undefined, version: string): void {
    const errors = [...validateObjectMeta(object, type.nameRule ?? 'dns1123-subdomain', type.namespaced), ...(type.validate?.(object, old, version) ?? [])];
    if (errors.length) throw invalid(type, object.metadata.name ?? '', errors);
  }

  private fieldContext(type: ResourceType, context: WriteContext) {
    return { mergeKeys: type.mergeKeys ?? {}, statusField: context.subresource === 'status' ? undefined : type.statusField, apiVersion: apiVersionOf(type.group, context.version), ...(context.subresource ? { subresource: context.subresource } : {}) };
  }
}

function omit(object: JsonObject, ...keys: string[]): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(object)) if (!keys.includes(k)) out[k] = v;
  return out;
}

function specOf(object: KubeObject, type: ResourceType): JsonObject {
  return omit(object, 'metadata', 'apiVersion', 'kind', ...(type.statusField ? [type.statusField] : []));
}

function withoutVolatile(object: KubeObject): JsonObject {
  const { managedFields: _m, resourceVersion: _r, ...metadata } = object.metadata;
  return { ...omit(object, 'apiVersion', 'kind'), metadata };
}
