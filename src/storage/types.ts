/**
 * One revisioned key-value interface for every service (DESIGN.md, "Storage").
 *
 * The model is etcd's: one global revision that increases by one with every write (a `put`, a
 * `delete` that removed something, or a whole `txn`); every key remembers the revision that created
 * it and the one that last modified it; history is kept until `compact`, so that lists can be read
 * consistently at one revision and watches can resume from a past revision without gaps.
 *
 * Revisions: an empty store is at revision 1 (as etcd is), so the first write is revision 2. A write
 * that changes nothing (deleting an absent key, a transaction of such deletes) keeps the revision.
 * On etcd the revision is the cluster's, shared by every prefix on it: it still only grows, but
 * another store's writes advance it too.
 *
 * Compaction at revision C: reads at C or later still work; a watch must start after C (an event at
 * revision R needs the state at R - 1 for its `prevKv`). Kubernetes' "list at RV, then watch from
 * RV + 1" therefore works whenever the list did.
 *
 * Keys are strings compared by UTF-8 byte order; values are opaque bytes (a service encrypts or
 * encodes them before they get here). Every backend (memory, SQLite, etcd) passes the same suite.
 */

export interface KeyValue {
  readonly key: string;
  readonly value: Uint8Array;
  /** Revision of the write that created the key (it changes when a deleted key is created again). */
  readonly createRevision: number;
  /** Revision of the last write to the key. */
  readonly modRevision: number;
  /** Number of writes since the key was created: 1 right after creation. */
  readonly version: number;
}

export interface ListOptions {
  /** At most this many items; more remain when the result carries `continue`. */
  limit?: number;
  /** The opaque token of a previous page; the page continues at that page's revision. */
  continue?: string;
  /** Read as of this revision (default: the current one). Fails with CompactedError when compacted away. */
  revision?: number;
}

export interface ListResult {
  readonly items: KeyValue[];
  /** The revision the whole list (every page of it) was read at. */
  readonly revision: number;
  /** Present when more items remain: pass it back in `ListOptions.continue`. */
  readonly continue?: string;
  /** How many items remain after this page, when `continue` is present. */
  readonly remaining?: number;
}

export interface WriteOptions {
  /**
   * Compare-and-swap: the key's current `modRevision` must equal this, or the write fails with a
   * ConflictError. `0` means "the key must not exist".
   */
  expectedRevision?: number;
}

export interface WriteResult {
  /** The revision of this write (for a delete that found nothing: the current revision). */
  readonly revision: number;
  /** The value before the write, if there was one. */
  readonly prev?: KeyValue;
}

export type Operation =
  | { readonly type: 'put'; readonly key: string; readonly value: Uint8Array }
  | { readonly type: 'delete'; readonly key: string };

/** A condition of a transaction: the key's `modRevision` equals `modRevision` (0: the key is absent). */
export interface Condition {
  readonly key: string;
  readonly modRevision: number;
}

export interface Transaction {
  readonly compare?: readonly Condition[];
  readonly operations: readonly Operation[];
}

export interface WatchEvent {
  readonly type: 'put' | 'delete';
  /** For a put: the new value. For a delete: a tombstone whose `modRevision` is the delete's revision and whose value is empty. */
  readonly kv: KeyValue;
  /** The value before this event, when there was one (always present for a delete). */
  readonly prevKv?: KeyValue;
  /** The revision of the write that caused the event (equal to `kv.modRevision`). */
  readonly revision: number;
}

export interface WatchOptions {
  /** The first revision to deliver (inclusive). Default: the next write after the watch starts. */
  fromRevision?: number;
}

export interface Watcher {
  /** Stop delivering events. Idempotent. */
  close(): void;
}

/**
 * Receives the events of one or more whole revisions, oldest first. The events are shared by every
 * watcher of the store: read them, do not change them. A listener that throws is a bug; the
 * exception surfaces as an uncaught exception, as from an event emitter.
 */
export type WatchListener = (events: readonly WatchEvent[]) => void;

/**
 * Called at most once when a watch ends without `close()` being called (for example
 * CompactedError when the watcher fell behind compaction, or UnavailableError when the backend was
 * lost). No events are delivered after it.
 */
export type WatchErrorListener = (error: StorageError) => void;

export interface Storage {
  /** The current value of `key`, or undefined. */
  get(key: string): Promise<KeyValue | undefined>;
  /**
   * Every key that starts with `prefix`, in key order, consistent at one revision across pages (a
   * continue token carries its revision). Fails with CompactedError when that revision was compacted
   * away, and with an `invalid` StorageError for a revision in the future or a foreign token.
   */
  list(prefix: string, options?: ListOptions): Promise<ListResult>;
  put(key: string, value: Uint8Array, options?: WriteOptions): Promise<WriteResult>;
  delete(key: string, options?: WriteOptions): Promise<WriteResult>;
  /**
   * All operations at one new revision, if every condition holds; otherwise ConflictError (for the
   * first condition that failed) and nothing is written. A key may appear in at most one operation.
   */
  txn(transaction: Transaction): Promise<{ readonly revision: number }>;
  /**
   * Deliver every write to keys under `prefix` from `fromRevision` on, in revision order, without
   * gaps. Rejects with CompactedError when `fromRevision` is no longer available (at or before the
   * compaction point). The events of one revision arrive in one listener call, in operation order;
   * listeners are never called inside the write that caused the event. Closing the store ends its
   * watches with UnavailableError.
   */
  watch(prefix: string, options: WatchOptions, listener: WatchListener, onError?: WatchErrorListener): Promise<Watcher>;
  /**
   * Forget history older than `revision`; later reads before it, and watches from it or before,
   * fail with CompactedError. Compacting at or below the current compaction point does nothing.
   */
  compact(revision: number): Promise<void>;
  /** The revision of the latest write (1 for an empty store). */
  currentRevision(): Promise<number>;
  /** The compaction point: the oldest revision still readable by `list` (0: never compacted). */
  compactedRevision(): Promise<number>;
  close(): Promise<void>;
}

export type StorageErrorCode = 'conflict' | 'compacted' | 'unavailable' | 'corrupt' | 'invalid';

/** Base of every error a storage backend reports; `code` is stable, the message is for people. */
export class StorageError extends Error {
  constructor(
    readonly code: StorageErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StorageError';
  }
}

/** A compare-and-swap condition did not hold. Nothing was written. */
export class ConflictError extends StorageError {
  constructor(
    readonly key: string,
    /** The key's modRevision at the time of the failed write (0: absent). */
    readonly actualRevision: number,
    readonly expectedRevision: number,
  ) {
    super('conflict', `conflict on ${JSON.stringify(key)}: expected revision ${expectedRevision}, found ${actualRevision}`);
    this.name = 'ConflictError';
  }
}

/** The requested revision has been compacted away. */
export class CompactedError extends StorageError {
  constructor(
    readonly requestedRevision: number,
    readonly compactRevision: number,
  ) {
    super('compacted', `revision ${requestedRevision} is no longer available: history was compacted at revision ${compactRevision}`);
    this.name = 'CompactedError';
  }
}

/** The backend cannot be reached or has been closed. */
export class UnavailableError extends StorageError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('unavailable', message, options);
    this.name = 'UnavailableError';
  }
}

/** An argument the contract does not allow: an empty key, a negative limit, a foreign continue token… */
export class InvalidArgumentError extends StorageError {
  constructor(message: string) {
    super('invalid', message);
    this.name = 'InvalidArgumentError';
  }
}

/** A read at a revision the store has not reached yet (Kubernetes answers "Too large resource version"). */
export class FutureRevisionError extends InvalidArgumentError {
  constructor(
    readonly requestedRevision: number,
    readonly currentRevision: number,
  ) {
    super(`revision ${requestedRevision} is in the future: the current revision is ${currentRevision}`);
    this.name = 'FutureRevisionError';
  }
}
