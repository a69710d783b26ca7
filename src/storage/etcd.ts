/**
 * The etcd backend (etcd3 client, etcd v3 API): the scale-out store. Several Portcullis processes
 * on one etcd cluster share data and see each other's writes through watches.
 *
 * Each store lives under a key prefix; keys are stored as prefix + key. Revisions are etcd's own:
 * one counter for the whole cluster, so writes under other prefixes advance it too, and `compact`
 * compacts the whole cluster's history.
 *
 * Watches use a gRPC watch stream each, created with prev_kv. A watch from revision R is created at
 * R - 1 and drops the events of R - 1: etcd then refuses it exactly when the state at R - 1 (which
 * the prevKv of R's events needs) was compacted. A broken stream is re-created from the next
 * revision not yet delivered, so a restart of etcd loses no event; a watch that cannot be re-created
 * within the connect timeout ends with UnavailableError.
 */
import { Etcd3, type IKeyValue, type IWatchResponse, type IDuplexStream, type IWatchRequest, type IRequestOp, type ICompare } from 'etcd3';
import {
  checkKey,
  checkPrefix,
  checkRevision,
  checkTransaction,
  checkValue,
  checkWriteOptions,
  encodeContinue,
  planList,
  prefixEnd,
} from './keys.js';
import {
  CompactedError,
  ConflictError,
  FutureRevisionError,
  InvalidArgumentError,
  StorageError,
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

export interface EtcdOptions {
  /** Every key of this store lives under this prefix (e.g. "/portcullis/"). */
  readonly prefix: string;
  /** How long opening waits for an answer, and how long a broken watch keeps trying. Default 5000 ms. */
  readonly connectTimeoutMs?: number;
  /** Deadline of each request. Default 10000 ms. */
  readonly requestTimeoutMs?: number;
  /** TLS (PEM texts): the CA that signed etcd's certificate, and a client certificate when etcd asks for one. */
  readonly tls?: { readonly ca: string; readonly cert?: string; readonly key?: string };
}

/**
 * etcd reports both "compacted" and "future revision" as OUT_OF_RANGE and tells them apart only by
 * their fixed messages (etcd's own Go client maps them the same way, in rpctypes).
 */
const COMPACTED = 'required revision has been compacted';
const FUTURE = 'required revision is a future revision';

export class EtcdStorage implements Storage {
  readonly #client: Etcd3;
  readonly #prefix: Buffer;
  readonly #end: Buffer;
  readonly #watches = new Set<EtcdWatch>();
  readonly #connectTimeoutMs: number;
  /** The last compaction point seen (etcd's is cluster-wide and only grows). */
  #compaction = 0;
  #closed = false;

  private constructor(
    /** "etcd at host:port,…": where, for messages. */
    readonly where: string,
    client: Etcd3,
    prefix: string,
    connectTimeoutMs: number,
  ) {
    this.#client = client;
    this.#prefix = Buffer.from(prefix, 'utf8');
    this.#end = Buffer.from(prefixEnd(this.#prefix)!);
    this.#connectTimeoutMs = connectTimeoutMs;
  }

  /** Connects and checks that etcd answers; an UnavailableError names the endpoints when it does not. */
  static async open(endpoints: readonly string[], options: EtcdOptions): Promise<EtcdStorage> {
    checkPrefix(options.prefix);
    // With "/a" beside "/ab/", the first store's lists would include the second's keys.
    if (!options.prefix.endsWith('/')) throw new InvalidArgumentError(`the key prefix of an etcd store must end with "/", not ${JSON.stringify(options.prefix)}`);
    const connectTimeoutMs = options.connectTimeoutMs ?? 5000;
    const requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
    const tls = options.tls;
    const client = new Etcd3({
      hosts: endpoints.map((endpoint) => `${tls ? 'https' : 'http'}://${endpoint}`),
      credentials: tls && {
        rootCertificate: Buffer.from(tls.ca),
        ...(tls.cert !== undefined && tls.key !== undefined ? { certChain: Buffer.from(tls.cert), privateKey: Buffer.from(tls.key) } : {}),
      },
      dialTimeout: connectTimeoutMs,
      grpcOptions: {
        // A whole list comes back in one message; gRPC's default cap of 4 MiB would refuse a big one.
        'grpc.max_receive_message_length': -1,
        // Notice an etcd that stopped answering (not only one that closed the connection), so that
        // watches reconnect or end; etcd accepts pings every 5 s or slower.
        'grpc.keepalive_time_ms': 30_000,
        'grpc.keepalive_timeout_ms': 10_000,
      },
      defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + requestTimeoutMs }),
    });
    const storage = new EtcdStorage(`etcd at ${endpoints.join(',')}`, client, options.prefix, connectTimeoutMs);
    try {
      await client.kv.range({ key: storage.#prefix, count_only: true }, { deadline: Date.now() + connectTimeoutMs });
    } catch (error) {
      client.close();
      throw new UnavailableError(`${storage.where}: unreachable (${reason(error)})`, { cause: error });
    }
    return storage;
  }

  async get(key: string): Promise<KeyValue | undefined> {
    this.#open();
    checkKey(key);
    const response = await this.#call(() => this.#client.kv.range({ key: this.#key(key) }));
    return response.kvs[0] && this.#toKeyValue(response.kvs[0]);
  }

  async list(prefix: string, options?: ListOptions): Promise<ListResult> {
    this.#open();
    const plan = planList(prefix, options);
    const response = await this.#call(
      () =>
        this.#client.kv.range({
          key: this.#key(plan.start),
          range_end: this.#rangeEnd(prefix),
          revision: plan.revision ?? 0,
          limit: plan.limit,
        }),
      plan.revision,
    );
    const revision = plan.revision ?? Number(response.header.revision);
    const items = response.kvs.map((kv) => this.#toKeyValue(kv));
    if (!response.more) return { items, revision };
    return { items, revision, continue: encodeContinue(revision, items.at(-1)!.key), remaining: Number(response.count) - items.length };
  }

  async put(key: string, value: Uint8Array, options?: WriteOptions): Promise<WriteResult> {
    this.#open();
    checkKey(key);
    checkValue(value);
    checkWriteOptions(options);
    const request = { key: this.#key(key), value: Buffer.from(value), prev_kv: true };
    if (options?.expectedRevision === undefined) {
      const response = await this.#call(() => this.#client.kv.put(request));
      return this.#writeResult(response.header.revision, response.prev_kv);
    }
    const response = await this.#conditional(key, options.expectedRevision, { request_put: request });
    return this.#writeResult(response.header.revision, response.responses[0]!.response_put.prev_kv);
  }

  async delete(key: string, options?: WriteOptions): Promise<WriteResult> {
    this.#open();
    checkKey(key);
    checkWriteOptions(options);
    const request = { key: this.#key(key), prev_kv: true };
    if (options?.expectedRevision === undefined) {
      const response = await this.#call(() => this.#client.kv.deleteRange(request));
      return this.#writeResult(response.header.revision, response.prev_kvs[0]);
    }
    const response = await this.#conditional(key, options.expectedRevision, { request_delete_range: request });
    return this.#writeResult(response.header.revision, response.responses[0]!.response_delete_range.prev_kvs[0]);
  }

  async txn(transaction: Transaction): Promise<{ readonly revision: number }> {
    this.#open();
    checkTransaction(transaction);
    const response = await this.#transaction(transaction.compare ?? [], transaction.operations.map((operation) => this.#operation(operation)));
    return { revision: Number(response.header.revision) };
  }

  async watch(prefix: string, options: WatchOptions, listener: WatchListener, onError?: WatchErrorListener): Promise<Watcher> {
    this.#open();
    checkPrefix(prefix);
    const fromRevision = options?.fromRevision;
    if (fromRevision !== undefined) {
      checkRevision('fromRevision', fromRevision, 1);
      // Refuse a compacted start here, where the caller awaits; etcd itself would only cancel the
      // watch after creating it.
      if (fromRevision > 1) {
        try {
          await this.#call(() => this.#client.kv.range({ key: this.#prefix, count_only: true, revision: fromRevision - 1 }), fromRevision);
        } catch (error) {
          if (!(error instanceof FutureRevisionError)) throw error; // a start still to come is allowed
        }
      } else {
        const compacted = await this.compactedRevision();
        if (compacted > 0) throw new CompactedError(fromRevision, compacted);
      }
    }
    const watch = new EtcdWatch(this, this.#key(prefix), this.#rangeEnd(prefix), listener, onError, (w) => this.#watches.delete(w));
    this.#watches.add(watch);
    try {
      await watch.start(fromRevision);
    } catch (error) {
      this.#watches.delete(watch);
      throw error;
    }
    return watch;
  }

  async compact(revision: number): Promise<void> {
    this.#open();
    checkRevision('revision', revision, 1);
    try {
      await this.#call(() => this.#client.kv.compact({ revision, physical: false }));
      this.#compaction = Math.max(this.#compaction, revision);
    } catch (error) {
      if (error instanceof CompactedError) return; // at or below the current compaction point
      if (error instanceof InvalidArgumentError) {
        throw new InvalidArgumentError(`cannot compact at revision ${revision}: the current revision is ${await this.currentRevision()}`);
      }
      throw error;
    }
  }

  async currentRevision(): Promise<number> {
    this.#open();
    const response = await this.#call(() => this.#client.kv.range({ key: this.#prefix, count_only: true }));
    return Number(response.header.revision);
  }

  /**
   * etcd has no call that reports its compaction point. A read at the last point seen (revision 1
   * at first) tells whether it has moved since; only then does a watch from revision 1 learn the new
   * one, from the cancellation etcd answers it with.
   */
  async compactedRevision(): Promise<number> {
    this.#open();
    try {
      await this.#client.kv.range({ key: this.#prefix, count_only: true, revision: Math.max(1, this.#compaction) });
      return this.#compaction;
    } catch (error) {
      if (!String((error as Error)?.message).includes(COMPACTED)) throw this.#translate(error);
    }
    this.#compaction = Math.max(this.#compaction, await this.#probeCompaction());
    return this.#compaction;
  }

  async #probeCompaction(): Promise<number> {
    const stream = await this.#call(() => this.#client.watchClient.watch());
    try {
      return await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new UnavailableError(`${this.where}: no answer to a watch within ${this.#connectTimeoutMs} ms`)), this.#connectTimeoutMs);
        stream.on('data', (response: IWatchResponse) => {
          if (response.compact_revision !== '0') {
            clearTimeout(timer);
            resolve(Number(response.compact_revision));
          }
        });
        stream.on('error', (error) => {
          clearTimeout(timer);
          reject(this.#translate(error));
        });
        stream.write({ create_request: { key: this.#prefix, start_revision: 1 } });
      });
    } finally {
      stream.cancel();
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const error = new UnavailableError(`${this.where}: the store was closed`);
    for (const watch of [...this.#watches]) watch.fail(error);
    this.#client.close();
  }

  // --- used by EtcdWatch ---

  get closed(): boolean {
    return this.#closed;
  }

  get connectTimeoutMs(): number {
    return this.#connectTimeoutMs;
  }

  openWatchStream(): Promise<IDuplexStream<IWatchRequest, IWatchResponse>> {
    return this.#call(() => this.#client.watchClient.watch());
  }

  toEvent(event: IWatchResponse['events'][number]): WatchEvent {
    const revision = Number(event.kv.mod_revision);
    const prevKv = event.prev_kv ? this.#toKeyValue(event.prev_kv) : undefined;
    if (event.type === 'Delete') {
      return { type: 'delete', kv: { ...this.#toKeyValue(event.kv), value: new Uint8Array(0) }, prevKv, revision };
    }
    const kv = this.#toKeyValue(event.kv);
    return prevKv ? { type: 'put', kv, prevKv, revision } : { type: 'put', kv, revision };
  }

  // --- internals ---

  /** etcd's failures as StorageErrors; `revision` is the one a read asked for (CompactedError, FutureRevisionError). */
  #translateRead(error: unknown, revision?: number): Promise<StorageError> | StorageError {
    const message = error instanceof Error ? error.message : String(error);
    if (message.includes(COMPACTED)) {
      if (revision === undefined) return new CompactedError(0, 0);
      return this.compactedRevision().then((compact) => new CompactedError(revision, compact));
    }
    if (message.includes(FUTURE) && revision !== undefined) {
      return this.currentRevision().then((current) => new FutureRevisionError(revision, current));
    }
    return this.#translate(error);
  }

  #open(): void {
    if (this.#closed) throw new UnavailableError(`${this.where}: the store is closed`);
  }

  #key(key: string): Buffer {
    return Buffer.concat([this.#prefix, Buffer.from(key, 'utf8')]);
  }

  #rangeEnd(prefix: string): Buffer {
    return prefix === '' ? this.#end : Buffer.from(prefixEnd(this.#key(prefix))!);
  }

  #toKeyValue(kv: IKeyValue): KeyValue {
    const value = kv.value;
    return {
      key: kv.key.subarray(this.#prefix.length).toString('utf8'),
      value: new Uint8Array(value.buffer, value.byteOffset, value.byteLength),
      createRevision: Number(kv.create_revision),
      modRevision: Number(kv.mod_revision),
      version: Number(kv.version),
    };
  }

  #writeResult(revision: string, prev: IKeyValue | null | undefined): WriteResult {
    return prev ? { revision: Number(revision), prev: this.#toKeyValue(prev) } : { revision: Number(revision) };
  }

  #operation(operation: Operation): IRequestOp {
    if (operation.type === 'put') return { request_put: { key: this.#key(operation.key), value: Buffer.from(operation.value) } };
    return { request_delete_range: { key: this.#key(operation.key) } };
  }

  #conditional(key: string, expectedRevision: number, operation: IRequestOp) {
    return this.#transaction([{ key, modRevision: expectedRevision }], [operation]);
  }

  /** A transaction whose failure branch reads every compared key, to name the first condition that failed. */
  async #transaction(conditions: readonly Condition[], operations: IRequestOp[]) {
    const compare: ICompare[] = conditions.map(({ key, modRevision }) => ({
      key: this.#key(key),
      target: 'Mod',
      result: 'Equal',
      mod_revision: modRevision,
    }));
    const failure: IRequestOp[] = conditions.map(({ key }) => ({ request_range: { key: this.#key(key), keys_only: true } }));
    const response = await this.#call(() => this.#client.kv.txn({ compare, success: operations, failure }));
    if (response.succeeded) return response;
    conditions.forEach(({ key, modRevision }, i) => {
      const actual = Number(response.responses[i]!.response_range.kvs[0]?.mod_revision ?? 0);
      if (actual !== modRevision) throw new ConflictError(key, actual, modRevision);
    });
    throw new UnavailableError(`${this.where}: a transaction failed although every condition held`);
  }

  async #call<T>(request: () => Promise<T>, revision?: number): Promise<T> {
    try {
      return await request();
    } catch (error) {
      throw await this.#translateRead(error, revision);
    }
  }

  #translate(error: unknown): StorageError {
    if (error instanceof StorageError) return error;
    const message = error instanceof Error ? error.message : String(error);
    if (message.includes(FUTURE)) return new InvalidArgumentError('the requested revision is in the future');
    if (this.#closed) return new UnavailableError(`${this.where}: the store is closed`, { cause: error });
    return new UnavailableError(`${this.where}: ${reason(error)}`, { cause: error });
  }
}

/** One watch: a gRPC watch stream, re-created from the next undelivered revision when it breaks. */
class EtcdWatch implements Watcher {
  #stream: IDuplexStream<IWatchRequest, IWatchResponse> | undefined;
  /** The next revision to deliver; events before it are dropped (the R - 1 of the start, or a replay). */
  #next = 0;
  #closed = false;
  #brokenSince: number | undefined;

  constructor(
    private readonly storage: EtcdStorage,
    private readonly key: Buffer,
    private readonly rangeEnd: Buffer,
    private readonly listener: WatchListener,
    private readonly onError: WatchErrorListener | undefined,
    private readonly detach: (watch: EtcdWatch) => void,
  ) {}

  /** Resolves once etcd has created the watch; from then on every write at `fromRevision` or later is delivered. */
  start(fromRevision: number | undefined): Promise<void> {
    this.#next = fromRevision ?? 0;
    return this.#connect();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.detach(this);
    this.#stream?.cancel();
  }

  fail(error: StorageError): void {
    if (this.#closed) return;
    this.close();
    queueMicrotask(() => this.onError?.(error));
  }

  /** Opens a stream and creates the watch on it; resolves when etcd confirms, rejects if it refuses or the stream breaks first. */
  async #connect(): Promise<void> {
    const stream = await this.storage.openWatchStream();
    if (this.#closed) return stream.cancel();
    this.#stream = stream;
    let created = false;
    await new Promise<void>((resolve, reject) => {
      const refuse = (error: StorageError): void => {
        if (created) this.fail(error);
        else reject(error);
      };
      const broken = (error: unknown): void => {
        if (this.#closed || stream !== this.#stream) return;
        this.#stream = undefined;
        const lost = new UnavailableError(`${this.storage.where}: watch lost (${reason(error)})`, { cause: error });
        if (created) this.#reconnect(lost);
        else reject(lost);
      };
      stream.on('data', (response: IWatchResponse) => {
        if (this.#closed || stream !== this.#stream) return;
        if (response.compact_revision !== '0') return refuse(new CompactedError(this.#next, Number(response.compact_revision)));
        if (response.canceled) {
          return refuse(new UnavailableError(`${this.storage.where}: watch cancelled (${response.cancel_reason || 'no reason given'})`));
        }
        if (response.created) {
          if (this.#next === 0) this.#next = Number(response.header.revision) + 1;
          this.#brokenSince = undefined;
          created = true;
          return resolve();
        }
        this.#deliver(response);
      });
      stream.on('error', broken);
      stream.on('end', () => broken(new Error('the watch stream ended')));
      const start = this.#next === 0 ? 0 : Math.max(1, this.#next - 1);
      stream.write({
        create_request: { key: this.key, range_end: this.rangeEnd, start_revision: start, prev_kv: true, progress_notify: true },
      });
    });
  }

  /** Tries again every 200 ms until the connect timeout has passed since the stream broke. */
  #reconnect(error: StorageError): void {
    if (this.#closed) return;
    this.#brokenSince ??= Date.now();
    if (this.storage.closed || error instanceof CompactedError || Date.now() - this.#brokenSince > this.storage.connectTimeoutMs) {
      this.fail(error);
      return;
    }
    setTimeout(() => {
      if (this.#closed) return;
      this.#connect().catch((failure: unknown) =>
        this.#reconnect(failure instanceof StorageError ? failure : new UnavailableError(`${this.storage.where}: watch lost (${reason(failure)})`)),
      );
    }, 200);
  }

  #deliver(response: IWatchResponse): void {
    if (response.events.length === 0) {
      // A progress notification: every event up to its revision has been sent.
      this.#next = Math.max(this.#next, Number(response.header.revision) + 1);
      return;
    }
    const events: WatchEvent[] = [];
    for (const raw of response.events) {
      const event = this.storage.toEvent(raw);
      if (event.revision < this.#next) continue;
      if (event.type === 'delete' && !event.prevKv) {
        // Only when the start's predecessor was compacted in the instant after watch() checked it.
        this.fail(new CompactedError(event.revision, event.revision));
        return;
      }
      events.push(event);
    }
    if (events.length === 0) return;
    this.#next = events.at(-1)!.revision + 1;
    queueMicrotask(() => {
      if (!this.#closed) this.listener(events);
    });
  }
}

/** The useful part of a gRPC error message, on one line. */
function reason(error: unknown): string {
  const message = (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
  for (const [pattern, explanation] of TLS_FAILURES) if (pattern.test(message)) return explanation;
  const last = /Last error: (?:Error: )?(.*?)\.?(?: Resolution note:.*)?$/.exec(message);
  if (last) return last[1]!;
  return message.replace(/^\d+ [A-Z_]+: /, '').replace(/^etcdserver: /, '');
}

/** OpenSSL's words for the TLS mistakes one makes configuring a client, and what they mean here. */
const TLS_FAILURES: readonly (readonly [RegExp, string])[] = [
  [/alert (bad certificate|certificate required|unknown ca)/, 'etcd refused the client certificate, or wants one: cert=FILE&key=FILE'],
  [/unable to verify|self[- ]signed certificate|unable to get local issuer/, "etcd's certificate is not signed by the CA in ca=FILE"],
  [/Hostname\/IP does not match|ERR_TLS_CERT_ALTNAME_INVALID/, "etcd's certificate does not name the host or address in the URL"],
];
