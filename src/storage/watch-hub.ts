/**
 * In-process fan-out of committed writes to watchers, for the backends whose writes all pass through
 * this process (memory, SQLite). A backend registers a watcher together with the history it has
 * already read (the catch-up) in the same synchronous step in which it reads it, and publishes each
 * commit after it is durable, so a watcher sees every revision once, in order, without gaps.
 *
 * Listeners are called from a microtask, never inside the write that caused the event; the events
 * of one revision always arrive in one call.
 */
import type { StorageError, WatchErrorListener, WatchEvent, Watcher, WatchListener } from './types.js';

class HubWatcher implements Watcher {
  #pending: WatchEvent[] = [];
  #scheduled = false;
  #closed = false;
  #error: StorageError | undefined;

  constructor(
    readonly prefix: string,
    /** Events below this revision were in the catch-up or precede the watch. */
    readonly fromRevision: number,
    private readonly listener: WatchListener,
    private readonly onError: WatchErrorListener | undefined,
    private readonly detach: (watcher: HubWatcher) => void,
  ) {}

  get closed(): boolean {
    return this.#closed;
  }

  enqueue(events: readonly WatchEvent[]): void {
    if (this.#closed) return;
    for (const event of events) {
      if (event.revision >= this.fromRevision && event.kv.key.startsWith(this.prefix)) this.#pending.push(event);
    }
    if (this.#pending.length > 0) this.#schedule();
  }

  /** End the watch with `error` after the events already queued. */
  fail(error: StorageError): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#error = error;
    this.detach(this);
    this.#schedule();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#pending = [];
    this.detach(this);
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => this.#flush());
  }

  #flush(): void {
    this.#scheduled = false;
    const events = this.#pending;
    this.#pending = [];
    if (events.length > 0) this.listener(events);
    const error = this.#error;
    if (error) {
      this.#error = undefined;
      this.onError?.(error);
    }
  }
}

export class WatchHub {
  readonly #watchers = new Set<HubWatcher>();

  /** Start a watcher that first receives `catchUp` (already filtered and ordered), then every later publish. */
  add(
    prefix: string,
    fromRevision: number,
    catchUp: readonly WatchEvent[],
    listener: WatchListener,
    onError: WatchErrorListener | undefined,
  ): Watcher {
    const watcher = new HubWatcher(prefix, fromRevision, listener, onError, (w) => this.#watchers.delete(w));
    this.#watchers.add(watcher);
    watcher.enqueue(catchUp);
    return watcher;
  }

  /** The events of one committed revision, in the order of its operations. */
  publish(events: readonly WatchEvent[]): void {
    if (events.length === 0) return;
    for (const watcher of this.#watchers) watcher.enqueue(events);
  }

  /** End every watcher with `error` (the store was closed or lost). */
  failAll(error: StorageError): void {
    for (const watcher of [...this.#watchers]) watcher.fail(error);
  }

  get size(): number {
    return this.#watchers.size;
  }
}
