/**
 * List, then watch from the list's resourceVersion; when the watch ends, watch again from the last
 * version seen; when the server says the version is too old (410 Expired), list again and hand the
 * handler the whole state. Handler calls are serialised, in event order.
 */
import type { Logger } from '../common/log.js';
import { KubeApiError, type KubeClient, type KubeObject, type WatchEvent, type WatchHandle } from './kube.js';

export interface ReflectorHandler {
  /** The complete current state, after the first list and after every re-list. */
  replace(objects: readonly KubeObject[]): Promise<void>;
  upsert(object: KubeObject): Promise<void>;
  remove(object: KubeObject): Promise<void>;
}

export class Reflector {
  private stopped = false;
  private resourceVersion = '';
  private watchHandle?: WatchHandle;
  private timer?: NodeJS.Timeout;
  private queue: Promise<void> = Promise.resolve();
  private backoffMs = 0;
  private synced!: () => void;
  /** Resolves after the first full list has been handed to the handler. */
  readonly initialSync: Promise<void> = new Promise((resolve) => (this.synced = resolve));

  constructor(
    private readonly client: KubeClient,
    private readonly path: string,
    private readonly handler: ReflectorHandler,
    private readonly logger: Logger,
    /**
     * Each watch asks the server to end it after this long (client-go picks 5–10 minutes at random),
     * so that a connection silently lost in between is noticed and resumed.
     */
    private readonly watchTimeoutSeconds: () => number = () => 300 + Math.floor(Math.random() * 300),
  ) {}

  start(): this {
    void this.relist();
    return this;
  }

  stop(): void {
    this.stopped = true;
    this.watchHandle?.close();
    clearTimeout(this.timer);
  }

  /** Wait until every event received so far has been handled. */
  idle(): Promise<void> {
    return this.queue;
  }

  private async relist(): Promise<void> {
    if (this.stopped) return;
    try {
      const { items, resourceVersion } = await this.client.list(this.path);
      this.resourceVersion = resourceVersion;
      await this.enqueue(() => this.handler.replace(items));
      this.synced();
      this.backoffMs = 0;
      this.watch();
    } catch (error) {
      this.retry(() => this.relist(), error);
    }
  }

  private watch(): void {
    if (this.stopped) return;
    this.watchHandle = this.client.watch(this.path, this.resourceVersion, this.watchTimeoutSeconds(), (event) => this.onEvent(event), (error) => {
      if (this.stopped) return;
      if (error instanceof KubeApiError && (error.status === 410 || error.reason === 'Expired' || error.reason === 'Gone')) {
        void this.relist();
      } else if (error) {
        this.retry(() => this.watch(), error);
      } else {
        this.watch();
      }
    });
  }

  private onEvent(event: WatchEvent): void {
    const version = event.object?.metadata?.resourceVersion;
    switch (event.type) {
      case 'ADDED':
      case 'MODIFIED':
        this.resourceVersion = version ?? this.resourceVersion;
        void this.enqueue(() => this.handler.upsert(event.object));
        return;
      case 'DELETED':
        this.resourceVersion = version ?? this.resourceVersion;
        void this.enqueue(() => this.handler.remove(event.object));
        return;
      case 'BOOKMARK':
        this.resourceVersion = version ?? this.resourceVersion;
        return;
      case 'ERROR':
        this.watchHandle?.close();
        if (event.object.code === 410) void this.relist();
        else this.retry(() => this.watch(), new Error(event.object.message ?? 'watch error'));
        return;
    }
  }

  private enqueue(work: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(work).catch((error: unknown) => {
      this.logger.error({ err: error, path: this.path }, 'sync handler failed');
    });
    return this.queue;
  }

  private retry(again: () => void, error: unknown): void {
    if (this.stopped) return;
    this.backoffMs = Math.min(Math.max(this.backoffMs * 2, 500), 30_000);
    this.logger.warn({ path: this.path, err: (error as Error).message, retryInMs: this.backoffMs }, 'watch failed; retrying');
    this.timer = setTimeout(again, this.backoffMs);
  }
}
