/**
 * The in-memory backend: the whole multi-version history in JavaScript structures, for tests and for
 * embedding where nothing must outlive the process. Same semantics as SQLite and etcd.
 */
import { WatchHub } from './watch-hub.js';
import {
  checkKey,
  checkPrefix,
  checkRevision,
  checkTransaction,
  checkValue,
  checkWriteOptions,
  compareKeys,
  encodeContinue,
  planList,
  tombstone,
} from './keys.js';
import {
  CompactedError,
  ConflictError,
  FutureRevisionError,
  InvalidArgumentError,
  UnavailableError,
  type Condition,
  type KeyValue,
  type ListOptions,
  type ListResult,
  type Operation,
  type Storage,
  type Transaction,
  type WatchErrorListener,
  type WatchEvent,
  type Watcher,
  type WatchListener,
  type WatchOptions,
  type WriteOptions,
  type WriteResult,
} from './types.js';

/** One version of a key: its value from `revision` on, or its deletion at `revision` (kv undefined). */
interface Version {
  readonly revision: number;
  readonly kv: KeyValue | undefined;
}

export class MemoryStorage implements Storage {
  /** An empty store is at revision 1, as etcd is; the first write is revision 2. */
  #revision = 1;
  #compacted = 0;
  #closed = false;
  /** Every key with a version still in history, in key order. */
  readonly #keys: string[] = [];
  /** Versions of each key, oldest first. */
  readonly #history = new Map<string, Version[]>();
  /** The events of every revision after the compaction point, oldest first, for watches that start in the past. */
  readonly #log: { readonly revision: number; readonly events: readonly WatchEvent[] }[] = [];
  readonly #hub = new WatchHub();

  async get(key: string): Promise<KeyValue | undefined> {
    this.#open();
    checkKey(key);
    return copy(this.#latest(key));
  }

  async list(prefix: string, options?: ListOptions): Promise<ListResult> {
    this.#open();
    const plan = planList(prefix, options);
    const revision = plan.revision ?? this.#revision;
    this.#readable(revision);
    const items: KeyValue[] = [];
    let remaining = 0;
    for (let i = lowerBound(this.#keys, plan.start); i < this.#keys.length; i++) {
      const key = this.#keys[i]!;
      if (!key.startsWith(prefix)) break;
      const kv = visibleAt(this.#history.get(key)!, revision);
      if (!kv) continue;
      if (plan.limit === 0 || items.length < plan.limit) items.push(copy(kv)!);
      else remaining++;
    }
    if (remaining === 0) return { items, revision };
    return { items, revision, continue: encodeContinue(revision, items.at(-1)!.key), remaining };
  }

  async put(key: string, value: Uint8Array, options?: WriteOptions): Promise<WriteResult> {
    checkKey(key);
    checkValue(value);
    checkWriteOptions(options);
    return this.#write({ type: 'put', key, value }, options);
  }

  async delete(key: string, options?: WriteOptions): Promise<WriteResult> {
    checkKey(key);
    checkWriteOptions(options);
    return this.#write({ type: 'delete', key }, options);
  }

  async txn(transaction: Transaction): Promise<{ readonly revision: number }> {
    this.#open();
    checkTransaction(transaction);
    this.#check(transaction.compare ?? []);
    return { revision: this.#apply(transaction.operations) };
  }

  async watch(prefix: string, options: WatchOptions, listener: WatchListener, onError?: WatchErrorListener): Promise<Watcher> {
    this.#open();
    checkPrefix(prefix);
    const fromRevision = options?.fromRevision ?? this.#revision + 1;
    checkRevision('fromRevision', fromRevision, 1);
    if (fromRevision <= this.#compacted) throw new CompactedError(fromRevision, this.#compacted);
    const catchUp: WatchEvent[] = [];
    for (let i = lowerBoundRevision(this.#log, fromRevision); i < this.#log.length; i++) {
      for (const event of this.#log[i]!.events) if (event.kv.key.startsWith(prefix)) catchUp.push(event);
    }
    return this.#hub.add(prefix, fromRevision, catchUp, listener, onError);
  }

  async compact(revision: number): Promise<void> {
    this.#open();
    checkRevision('revision', revision, 1);
    if (revision > this.#revision) throw new InvalidArgumentError(`cannot compact at revision ${revision}: the current revision is ${this.#revision}`);
    if (revision <= this.#compacted) return;
    this.#compacted = revision;
    for (let i = this.#keys.length - 1; i >= 0; i--) {
      const key = this.#keys[i]!;
      const versions = this.#history.get(key)!;
      let keep = versions.length - 1;
      while (keep > 0 && versions[keep]!.revision > revision) keep--;
      if (versions[keep]!.revision > revision) continue;
      // The version current at `revision` stays (unless it is a deletion); older ones go.
      const drop = versions[keep]!.kv ? keep : keep + 1;
      versions.splice(0, drop);
      if (versions.length === 0) {
        this.#history.delete(key);
        this.#keys.splice(i, 1);
      }
    }
    this.#log.splice(0, lowerBoundRevision(this.#log, revision + 1));
  }

  async currentRevision(): Promise<number> {
    this.#open();
    return this.#revision;
  }

  async compactedRevision(): Promise<number> {
    this.#open();
    return this.#compacted;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#hub.failAll(new UnavailableError('the memory store was closed'));
  }

  #open(): void {
    if (this.#closed) throw new UnavailableError('the memory store is closed');
  }

  #readable(revision: number): void {
    if (revision < this.#compacted) throw new CompactedError(revision, this.#compacted);
    if (revision > this.#revision) throw new FutureRevisionError(revision, this.#revision);
  }

  #latest(key: string): KeyValue | undefined {
    return this.#history.get(key)?.at(-1)?.kv;
  }

  #write(operation: Operation, options: WriteOptions | undefined): WriteResult {
    this.#open();
    const prev = this.#latest(operation.key);
    if (options?.expectedRevision !== undefined) this.#check([{ key: operation.key, modRevision: options.expectedRevision }]);
    const revision = this.#apply([operation]);
    return prev ? { revision, prev: copy(prev) } : { revision };
  }

  #check(conditions: readonly Condition[]): void {
    for (const { key, modRevision } of conditions) {
      const actual = this.#latest(key)?.modRevision ?? 0;
      if (actual !== modRevision) throw new ConflictError(key, actual, modRevision);
    }
  }

  /** Applies the operations at one new revision; nothing changes (and the revision stays) when none has an effect. */
  #apply(operations: readonly Operation[]): number {
    const revision = this.#revision + 1;
    const events: WatchEvent[] = [];
    for (const operation of operations) {
      const prev = this.#latest(operation.key);
      if (operation.type === 'delete') {
        if (!prev) continue;
        this.#append(operation.key, { revision, kv: undefined });
        events.push({ type: 'delete', kv: tombstone(operation.key, revision), prevKv: copy(prev), revision });
      } else {
        const kv: KeyValue = {
          key: operation.key,
          value: new Uint8Array(operation.value),
          createRevision: prev ? prev.createRevision : revision,
          modRevision: revision,
          version: prev ? prev.version + 1 : 1,
        };
        this.#append(operation.key, { revision, kv });
        events.push(prev ? { type: 'put', kv: copy(kv)!, prevKv: copy(prev), revision } : { type: 'put', kv: copy(kv)!, revision });
      }
    }
    if (events.length === 0) return this.#revision;
    this.#revision = revision;
    this.#log.push({ revision, events });
    this.#hub.publish(events);
    return revision;
  }

  #append(key: string, version: Version): void {
    const versions = this.#history.get(key);
    if (versions) {
      versions.push(version);
      return;
    }
    this.#history.set(key, [version]);
    this.#keys.splice(lowerBound(this.#keys, key), 0, key);
  }
}

function visibleAt(versions: readonly Version[], revision: number): KeyValue | undefined {
  for (let i = versions.length - 1; i >= 0; i--) {
    if (versions[i]!.revision <= revision) return versions[i]!.kv;
  }
  return undefined;
}

/** The index of the first key not before `key`. */
function lowerBound(keys: readonly string[], key: string): number {
  let low = 0;
  let high = keys.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compareKeys(keys[middle]!, key) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

function lowerBoundRevision(log: readonly { readonly revision: number }[], revision: number): number {
  let low = 0;
  let high = log.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (log[middle]!.revision < revision) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Callers get their own bytes: changing a returned value must not change the store. */
function copy(kv: KeyValue | undefined): KeyValue | undefined {
  return kv && { ...kv, value: kv.value.slice() };
}
