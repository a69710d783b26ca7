/**
 * The one generic store of API objects over the revisioned key-value storage. An object's
 * `resourceVersion` is the storage revision of its last write, so optimistic concurrency is the
 * storage's compare-and-swap and a watch resumes from any resourceVersion the storage still has.
 *
 * Keys: `/registry/<group|core>/<resource>/<namespace>/<name>` (cluster-scoped: no namespace part).
 * Values: the object as JSON in the kind's storage version, without `resourceVersion`.
 */
import { CompactedError, ConflictError, StorageError, type KeyValue, type Storage, type WatchEvent, type Watcher } from '../../storage/types.js';
import { alreadyExists, badRequest, conflict, expired, internalError, notFound, OBJECT_MODIFIED, serviceUnavailable, StatusError } from '../errors.js';
import type { KubeObject } from '../object.js';
import type { ResourceType } from '../resources/types.js';
import type { ValueTransformer } from './encryption.js';
import type { Predicate } from './selectors.js';

export interface ListPage {
  readonly items: KubeObject[];
  readonly resourceVersion: string;
  readonly continue?: string;
  readonly remainingItemCount?: number;
}

export interface StoreWatchEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly object: KubeObject;
  /** For MODIFIED: the object before the write (selector transitions). */
  readonly previous?: KubeObject;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

export class Store {
  constructor(
    private readonly storage: Storage,
    readonly type: ResourceType,
    /** Encryption at rest for this kind's values (Secrets), or none. */
    private readonly transformer?: ValueTransformer,
  ) {}

  private base(): string {
    return `/registry/${this.type.group || 'core'}/${this.type.resource}/`;
  }

  key(namespace: string, name: string): string {
    return this.type.namespaced ? `${this.base()}${namespace}/${name}` : `${this.base()}${name}`;
  }

  prefix(namespace: string): string {
    return this.type.namespaced && namespace ? `${this.base()}${namespace}/` : this.base();
  }

  decode(kv: KeyValue, revision = kv.modRevision): KubeObject {
    let object: KubeObject;
    try {
      const value = this.transformer ? this.transformer.fromStorage(kv.value, kv.key) : kv.value;
      object = JSON.parse(decoder.decode(value)) as KubeObject;
    } catch (error) {
      if (error instanceof StatusError) throw error;
      throw internalError(`stored object at ${kv.key} is not valid JSON`, { cause: error });
    }
    object.metadata.resourceVersion = String(revision);
    return object;
  }

  private encode(object: KubeObject): Uint8Array {
    const { resourceVersion: _rv, ...metadata } = object.metadata;
    const plain = encoder.encode(JSON.stringify({ ...object, metadata }));
    return this.transformer ? this.transformer.toStorage(plain, this.key(object.metadata.namespace ?? '', object.metadata.name!)) : plain;
  }

  async get(namespace: string, name: string): Promise<KubeObject> {
    const kv = await guard(() => this.storage.get(this.key(namespace, name)));
    if (!kv) throw notFound(this.type, name);
    return this.decode(kv);
  }

  async find(namespace: string, name: string): Promise<KubeObject | undefined> {
    const kv = await guard(() => this.storage.get(this.key(namespace, name)));
    return kv ? this.decode(kv) : undefined;
  }

  /**
   * One page of matching objects. Pages are filled by reading storage pages of the missing size, so
   * the storage continue token always points just after the last object looked at.
   */
  async list(namespace: string, options: { predicate?: Predicate; limit?: number; continue?: string; resourceVersion?: number } = {}): Promise<ListPage> {
    const items: KubeObject[] = [];
    let token = options.continue;
    let revision = 0;
    let remaining: number | undefined;
    for (;;) {
      const want = options.limit ? options.limit - items.length : undefined;
      const page = await guard(
        () => this.storage.list(this.prefix(namespace), { ...(want ? { limit: want } : {}), ...(token ? { continue: token } : {}), ...(options.resourceVersion && !token ? { revision: options.resourceVersion } : {}) }),
        token ? 'continue' : options.resourceVersion ? 'resourceVersion' : 'none',
      );
      revision = page.revision;
      for (const kv of page.items) {
        const object = this.decode(kv);
        if (!options.predicate || options.predicate(object)) items.push(object);
      }
      token = page.continue;
      remaining = page.remaining;
      if (!token || (options.limit && items.length >= options.limit)) break;
    }
    return {
      items,
      resourceVersion: String(revision),
      ...(token ? { continue: token } : {}),
      ...(token && remaining !== undefined && !options.predicate ? { remainingItemCount: remaining } : {}),
    };
  }

  async create(object: KubeObject): Promise<KubeObject> {
    const name = object.metadata.name!;
    const namespace = object.metadata.namespace ?? '';
    try {
      const result = await this.storage.put(this.key(namespace, name), this.encode(object), { expectedRevision: 0 });
      return { ...object, metadata: { ...object.metadata, resourceVersion: String(result.revision) } };
    } catch (error) {
      if (error instanceof ConflictError) throw alreadyExists(this.type, name);
      throw translate(error);
    }
  }

  /** Write `object` if the stored one still has `expectedRevision` (409 Conflict otherwise). */
  async update(object: KubeObject, expectedRevision: number): Promise<KubeObject> {
    const name = object.metadata.name!;
    try {
      const result = await this.storage.put(this.key(object.metadata.namespace ?? '', name), this.encode(object), { expectedRevision });
      return { ...object, metadata: { ...object.metadata, resourceVersion: String(result.revision) } };
    } catch (error) {
      if (error instanceof ConflictError) {
        if (error.actualRevision === 0) throw notFound(this.type, name);
        throw conflict(this.type, name, OBJECT_MODIFIED);
      }
      throw translate(error);
    }
  }

  async delete(namespace: string, name: string, expectedRevision: number): Promise<void> {
    try {
      await this.storage.delete(this.key(namespace, name), { expectedRevision });
    } catch (error) {
      if (error instanceof ConflictError) {
        if (error.actualRevision === 0) throw notFound(this.type, name);
        throw conflict(this.type, name, OBJECT_MODIFIED);
      }
      throw translate(error);
    }
  }

  async currentRevision(): Promise<number> {
    return guard(() => this.storage.currentRevision());
  }

  /**
   * Deliver changes after `afterRevision`. A revision the storage no longer has fails with 410
   * Expired (`too old resource version`), which the watch handler sends as an ERROR event.
   */
  async watch(namespace: string, afterRevision: number, listener: (events: StoreWatchEvent[]) => void, onError: (error: StatusError) => void): Promise<Watcher> {
    const onEvents = (events: readonly WatchEvent[]) => {
      const out: StoreWatchEvent[] = [];
      for (const event of events) {
        try {
          if (event.type === 'delete') {
            if (event.prevKv) out.push({ type: 'DELETED', object: this.decode(event.prevKv, event.revision) });
          } else if (event.kv.version === 1 || !event.prevKv) {
            out.push({ type: 'ADDED', object: this.decode(event.kv) });
          } else {
            out.push({ type: 'MODIFIED', object: this.decode(event.kv), previous: this.decode(event.prevKv) });
          }
        } catch (error) {
          onError(error instanceof StatusError ? error : internalError(String(error)));
        }
      }
      if (out.length) listener(out);
    };
    try {
      return await this.storage.watch(this.prefix(namespace), { fromRevision: afterRevision + 1 }, onEvents, (error) => onError(translateWatch(error, afterRevision)));
    } catch (error) {
      throw translateWatch(error, afterRevision);
    }
  }
}

function translateWatch(error: unknown, afterRevision: number): StatusError {
  if (error instanceof CompactedError) return expired(`too old resource version: ${afterRevision} (${error.compactRevision})`);
  return translate(error);
}

/** `from`: what a list read its revision from, which decides upstream's 410 text when that revision is compacted. */
async function guard<T>(operation: () => Promise<T>, from: 'continue' | 'resourceVersion' | 'none' = 'none'): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (from === 'continue' && error instanceof CompactedError) {
      throw expired('The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.');
    }
    if (from === 'resourceVersion' && error instanceof CompactedError) throw expired('The resourceVersion for the provided list is too old.');
    if (from === 'continue' && error instanceof StorageError && error.code === 'invalid') throw badRequest(`invalid continue token: ${error.message}`);
    throw translate(error);
  }
}

function translate(error: unknown): StatusError {
  if (error instanceof StatusError) return error;
  if (error instanceof StorageError && error.code === 'unavailable') return serviceUnavailable(`storage unavailable: ${error.message}`);
  return internalError(error instanceof Error ? error.message : String(error), { cause: error });
}
