/**
 * The secrets service core: the seal, the barrier, the mount table and router, the policy and
 * token stores, audit, and the request pipeline
 *
 *   sealed? (503) → route by longest prefix (404) → create-vs-update by existence check →
 *   token lookup (403) → ACL incl. sudo and parameter rules (403) → backend → login → token →
 *   use counting → audit.
 *
 * The HTTP edge (http/server.ts) turns wire requests into `LogicalInput` and `LogicalResult` into
 * Vault's envelope; this file knows nothing of HTTP.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Logger } from '../common/log.js';
import { StorageError, type Storage } from '../storage/types.js';
import { PolicyStore } from './acl/store.js';
import { AuditBroker, type AuditAuth, type AuditDeviceEntry, type AuditEvent } from './audit.js';
import { authMethods } from './auth/index.js';
import { secretsEngines } from './engines.js';
import { InvalidRequestError, NotFoundError, PermissionDeniedError, SealedError } from './errors.js';
import type { Backend } from './framework/backend.js';
import type { Caller, MountInfo, Operation, Request } from './logical.js';
import { BackendRegistry, type SystemView } from './registry.js';
import { Router, type MountEntry, type MountKind, type Route } from './router.js';
import { Barrier, BarrierAuthenticationError } from './seal/barrier.js';
import { encodeToken, OTP_LENGTH } from './seal/otp.js';
import { combineShares, decodeKey, SEAL_CONFIG_PATH, ShareCollector, splitKey, validateSealConfig, type SealConfig } from './seal/shamir.js';
import { getJSON, listRecursive, putJSON } from './storage-view.js';
import { systemBackend } from './system/backend.js';
import { TokenService, type AuthMountHandle } from './token/backend.js';
import { randomBase62, TokenStore, type TokenEntry } from './token/store.js';
import { cubbyholePrefix } from './kv/cubbyhole.js';

export const VERSION = '1.17.2';
const BUILD_DATE = '2026-01-01T00:00:00Z';
export const DEFAULT_LEASE_TTL = 768 * 3600;

export interface CoreOptions {
  readonly storage: Storage;
  readonly logger: Logger;
  /** Shown as `storage_type` in seal status (`inmem`, `sqlite`, `etcd`). */
  readonly storageType: string;
  readonly defaultLeaseTtl?: number;
  readonly maxLeaseTtl?: number;
  /** No compatibility conveniences (KV v2 un-prefixed writes answer 404 as in Vault). */
  readonly strictVault?: boolean;
  /** Backend types; default: the built-in secrets engines and auth methods. */
  readonly registry?: BackendRegistry;
}

export interface SealStatus {
  type: 'shamir';
  initialized: boolean;
  sealed: boolean;
  t: number;
  n: number;
  progress: number;
  nonce: string;
  version: string;
  build_date: string;
  migration: boolean;
  cluster_name?: string;
  cluster_id?: string;
  recovery_seal: boolean;
  storage_type: string;
}

export interface GenerateRootStatus {
  nonce: string;
  started: boolean;
  progress: number;
  required: number;
  complete: boolean;
  encoded_token: string;
  encoded_root_token: string;
  pgp_fingerprint: string;
  otp: string;
  otp_length: number;
}

export interface LogicalInput {
  readonly operation: Operation | 'write';
  /** Path after `/v1/`, decoded. */
  readonly path: string;
  readonly data: Record<string, unknown>;
  readonly token?: string;
  readonly remoteAddress: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly mergePatch?: boolean;
}

export interface LogicalResult {
  readonly statusCode?: number;
  readonly data?: Record<string, unknown> | null;
  readonly auth?: Record<string, unknown>;
  readonly warnings?: readonly string[];
  readonly leaseDuration?: number;
  readonly raw?: { readonly body: unknown };
  readonly mountType: string;
  readonly operation: Operation;
  readonly requestId: string;
}

const CLUSTER_PATH = 'core/cluster';

interface ClusterInfo {
  name: string;
  id: string;
}

/** A serialising lock for seal state changes. */
class Mutex {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(fn, fn);
    this.tail = next.catch(() => undefined);
    return next;
  }
}

function hex8(): string {
  return randomBytes(4).toString('hex');
}

export class Core {
  readonly barrier: Barrier;
  readonly router = new Router();
  readonly registry: BackendRegistry;
  private readonly logger: Logger;
  private readonly lock = new Mutex();
  private readonly unsealShares = new ShareCollector();
  private unsealNonce = '';
  private generateRoot: { nonce: string; otp: string; shares: ShareCollector } | undefined;
  private cluster: ClusterInfo | undefined;
  private active: ActiveState | undefined;
  readonly defaultLeaseTtl: number;
  readonly maxLeaseTtl: number;
  readonly strictVault: boolean;

  constructor(private readonly options: CoreOptions) {
    this.barrier = new Barrier(options.storage);
    this.logger = options.logger;
    this.registry = options.registry ?? new BackendRegistry([...secretsEngines, ...authMethods]);
    this.defaultLeaseTtl = options.defaultLeaseTtl ?? DEFAULT_LEASE_TTL;
    this.maxLeaseTtl = options.maxLeaseTtl ?? DEFAULT_LEASE_TTL;
    this.strictVault = options.strictVault ?? false;
  }

  get sealed(): boolean {
    return this.active === undefined;
  }

  /** The unsealed state; throws 503 while sealed. */
  get state(): ActiveState {
    if (!this.active) throw new SealedError();
    return this.active;
  }

  async sealConfig(): Promise<SealConfig | undefined> {
    const kv = await this.options.storage.get(SEAL_CONFIG_PATH);
    return kv ? (JSON.parse(Buffer.from(kv.value).toString('utf8')) as SealConfig) : undefined;
  }

  async initialized(): Promise<boolean> {
    return (await this.sealConfig()) !== undefined && (await this.barrier.initialized());
  }

  async sealStatus(): Promise<SealStatus> {
    const config = await this.sealConfig();
    if (!this.cluster) {
      const kv = await this.options.storage.get(CLUSTER_PATH);
      if (kv) this.cluster = JSON.parse(Buffer.from(kv.value).toString('utf8')) as ClusterInfo;
    }
    const status: SealStatus = {
      type: 'shamir',
      initialized: config !== undefined,
      sealed: this.sealed,
      t: config?.secret_threshold ?? 0,
      n: config?.secret_shares ?? 0,
      progress: this.sealed ? this.unsealShares.progress : 0,
      nonce: this.sealed ? this.unsealNonce : '',
      version: VERSION,
      build_date: BUILD_DATE,
      migration: false,
      recovery_seal: false,
      storage_type: this.options.storageType,
    };
    if (!this.sealed && this.cluster) {
      status.cluster_name = this.cluster.name;
      status.cluster_id = this.cluster.id;
    }
    return status;
  }

  /** `sys/init`: create the keyring and the root token; the server stays sealed. */
  init(shares: number, threshold: number, rootTokenId?: string): Promise<{ keys: string[]; keys_base64: string[]; root_token: string }> {
    return this.lock.run(async () => {
      if (await this.initialized()) throw new InvalidRequestError('Vault is already initialized');
      const config = validateSealConfig(shares, threshold);
      const unsealKey = randomBytes(32);
      const parts = await splitKey(unsealKey, config);
      await this.barrier.initialize(unsealKey);
      const cluster: ClusterInfo = { name: `vault-cluster-${hex8()}`, id: randomUUID() };
      await this.options.storage.put(CLUSTER_PATH, Buffer.from(JSON.stringify(cluster)));
      await this.barrier.unseal(unsealKey);
      let rootToken: string;
      try {
        const state = await this.postUnseal();
        rootToken = await state.tokens.createRootToken(rootTokenId);
      } finally {
        await this.teardown();
      }
      await this.options.storage.put(SEAL_CONFIG_PATH, Buffer.from(JSON.stringify(config)));
      unsealKey.fill(0);
      return {
        keys: parts.map((p) => Buffer.from(p).toString('hex')),
        keys_base64: parts.map((p) => Buffer.from(p).toString('base64')),
        root_token: rootToken,
      };
    });
  }

  /** `sys/unseal`: one more share, or `reset`. */
  unseal(key: string | undefined, reset: boolean): Promise<SealStatus> {
    return this.lock.run(async () => {
      const config = await this.sealConfig();
      if (!config) throw new InvalidRequestError('Vault is not initialized');
      if (reset) {
        if (!this.sealed) throw new InvalidRequestError('vault is unsealed');
        this.unsealShares.reset();
        this.unsealNonce = '';
        return this.sealStatus();
      }
      if (key === undefined || key === '') throw new InvalidRequestError("'key' must be specified in request body as JSON, or 'reset' set to true");
      const share = decodeKey(key);
      if (!this.sealed) return this.sealStatus();
      if (this.unsealShares.progress === 0) this.unsealNonce = randomUUID();
      this.unsealShares.add(share);
      if (this.unsealShares.progress < config.secret_threshold) return this.sealStatus();
      const shares = this.unsealShares.take();
      this.unsealNonce = '';
      let unsealKey: Uint8Array;
      try {
        unsealKey = await combineShares(shares);
        await this.barrier.unseal(unsealKey);
      } catch (error) {
        // Wrong or inconsistent shares (the combination fails, or the keyring does not decrypt).
        if (error instanceof StorageError) throw error;
        throw new InvalidRequestError(new BarrierAuthenticationError().message, { cause: error });
      }
      await this.postUnseal();
      this.logger.info('unsealed');
      return this.sealStatus();
    });
  }

  /** `sys/seal` (and shutdown): drop every key from memory. */
  seal(): Promise<void> {
    return this.lock.run(async () => {
      await this.teardown();
      this.logger.info('sealed');
    });
  }

  /** Dev mode: initialise with one share, unseal, and return the key and root token. */
  async initDev(rootTokenId?: string): Promise<{ unsealKey: string; rootToken: string }> {
    const result = await this.init(1, 1, rootTokenId);
    await this.unseal(result.keys_base64[0]!, false);
    return { unsealKey: result.keys_base64[0]!, rootToken: result.root_token };
  }

  // ---- generate-root -------------------------------------------------------------------------

  private async requiredShares(): Promise<number> {
    const config = await this.sealConfig();
    if (!config) throw new InvalidRequestError('server is not yet initialized');
    return config.secret_threshold;
  }

  async generateRootStatus(): Promise<GenerateRootStatus> {
    const required = await this.requiredShares();
    return {
      nonce: this.generateRoot?.nonce ?? '',
      started: this.generateRoot !== undefined,
      progress: this.generateRoot?.shares.progress ?? 0,
      required,
      complete: false,
      encoded_token: '',
      encoded_root_token: '',
      pgp_fingerprint: '',
      otp: '',
      otp_length: OTP_LENGTH,
    };
  }

  generateRootStart(otp: string, pgpKey: string): Promise<GenerateRootStatus> {
    return this.lock.run(async () => {
      await this.requiredShares();
      if (this.sealed) throw new SealedError();
      if (this.generateRoot) throw new InvalidRequestError('root generation already in progress');
      if (pgpKey) throw new InvalidRequestError('pgp_key is not supported by this server; use the OTP flow');
      if (otp && otp.length !== OTP_LENGTH) throw new InvalidRequestError('OTP string has incorrect length');
      const generated = otp ? '' : randomBase62(OTP_LENGTH);
      this.generateRoot = { nonce: randomUUID(), otp: otp || generated, shares: new ShareCollector() };
      return { ...(await this.generateRootStatus()), otp: generated };
    });
  }

  generateRootCancel(): Promise<void> {
    return this.lock.run(async () => {
      this.generateRoot?.shares.reset();
      this.generateRoot = undefined;
    });
  }

  generateRootUpdate(key: string | undefined, nonce: string | undefined): Promise<GenerateRootStatus> {
    return this.lock.run(async () => {
      const required = await this.requiredShares();
      if (!key) throw new InvalidRequestError("'key' must be specified in request body as JSON");
      const attempt = this.generateRoot;
      if (!attempt) throw new InvalidRequestError('no root generation in progress');
      if (nonce !== attempt.nonce) throw new InvalidRequestError(`incorrect nonce supplied; nonce for this root generation operation is "${attempt.nonce}"`);
      const share = decodeKey(key);
      if (!attempt.shares.add(share)) throw new InvalidRequestError('given key has already been provided during this generation operation');
      const result: GenerateRootStatus = {
        nonce: attempt.nonce, started: true, progress: attempt.shares.progress, required, complete: false,
        encoded_token: '', encoded_root_token: '', pgp_fingerprint: '', otp: '', otp_length: 0,
      };
      if (attempt.shares.progress < required) return result;
      const shares = attempt.shares.take();
      try {
        await this.barrier.verify(await combineShares(shares));
      } catch (error) {
        throw new InvalidRequestError(`root generation aborted: root key verification failed: ${new BarrierAuthenticationError().message}`, { cause: error });
      }
      const token = await this.state.tokens.createRootToken();
      const encoded = encodeToken(token, attempt.otp);
      this.generateRoot = undefined;
      return { ...result, complete: true, encoded_token: encoded, encoded_root_token: encoded };
    });
  }

  // ---- mounts --------------------------------------------------------------------------------

  private async postUnseal(): Promise<ActiveState> {
    const sysView = this.barrier.view('sys/');
    const policies = new PolicyStore(sysView.sub('policy/'));
    await policies.setup();
    const auditSaltBytes = await sysView.get('audit-salt');
    const auditSalt = auditSaltBytes ? Buffer.from(auditSaltBytes) : randomBytes(32);
    if (!auditSaltBytes) await sysView.put('audit-salt', auditSalt);
    const audit = new AuditBroker(auditSalt);
    let state!: ActiveState;
    const tokenStore = new TokenStore(sysView.sub('token/'), this.barrier, Date.now, async (entry) => state.dropCubbyhole(entry));
    await tokenStore.setup();
    state = new ActiveState(this, policies, tokenStore, audit, this.logger);
    state.tokens = new TokenService({
      store: tokenStore,
      policies,
      view: sysView.sub('token/'),
      defaultTtl: () => this.defaultLeaseTtl,
      maxTtl: () => this.maxLeaseTtl,
      authMount: (accessor) => state.authMountHandle(accessor),
      entryOf: (caller) => state.callerEntries.get(caller),
      onTidy: (running) => state.track(running),
    });
    state.startSweeper();
    await state.loadMounts();
    for (const entry of (await getJSON<AuditDeviceEntry[]>(sysView, 'audit-devices')) ?? []) {
      try {
        await audit.enable(entry);
      } catch (error) {
        this.logger.error({ err: error, path: entry.path }, 'audit device could not be re-enabled');
      }
    }
    this.active = state;
    return state;
  }

  private async teardown(): Promise<void> {
    const state = this.active;
    this.active = undefined;
    this.generateRoot = undefined;
    this.unsealShares.reset();
    this.unsealNonce = '';
    if (state) await state.close();
    this.router.setRoutes([]);
    this.barrier.seal();
  }

  async close(): Promise<void> {
    await this.seal();
  }

  /** Serve one logical request (see the pipeline at the top of this file). */
  async handle(input: LogicalInput): Promise<LogicalResult> {
    return this.state.handle(input);
  }
}

/** Everything that exists only while unsealed. */
export class ActiveState {
  tokens!: TokenService;
  /** The token entry behind each request's `Caller`, for the token store's own handlers. */
  readonly callerEntries = new WeakMap<object, TokenEntry>();

  constructor(
    readonly core: Core,
    readonly policies: PolicyStore,
    readonly tokenStore: TokenStore,
    readonly audit: AuditBroker,
    private readonly logger: Logger,
  ) {}

  private mounts: MountEntry[] = [];
  private auths: MountEntry[] = [];

  async loadMounts(): Promise<void> {
    const view = this.core.barrier.view('core/');
    let mounts = await getJSON<MountEntry[]>(view, 'mounts');
    let auths = await getJSON<MountEntry[]>(view, 'auth');
    if (!mounts) {
      mounts = [
        newEntry('cubbyhole/', 'cubbyhole', 'per-token private secret storage', null),
        newEntry('sys/', 'system', 'system endpoints used for control, policy and debugging', null),
      ];
      await putJSON(view, 'mounts', mounts);
    }
    if (!auths) {
      auths = [newEntry('token/', 'token', 'token based credentials', null, 'auth')];
      await putJSON(view, 'auth', auths);
    }
    this.mounts = mounts;
    this.auths = auths;
    await this.rebuildRoutes();
  }

  private readonly backends = new Map<string, Backend>();

  private systemView(entry: MountEntry): SystemView {
    const core = this.core;
    return {
      defaultLeaseTtl: () => entry.config.default_lease_ttl || core.defaultLeaseTtl,
      maxLeaseTtl: () => entry.config.max_lease_ttl || core.maxLeaseTtl,
      policyExists: (name) => this.policies.exists(name),
      strictVault: core.strictVault,
    };
  }

  private async backendFor(entry: MountEntry, kind: MountKind, info: MountInfo): Promise<Backend> {
    const cached = this.backends.get(entry.uuid);
    if (cached) return cached;
    let backend: Backend;
    if (entry.type === 'system') backend = systemBackend(this);
    else if (entry.type === 'token' && kind === 'auth') backend = this.tokens.backend();
    else {
      const registration = this.core.registry.get(entry.type);
      if (!registration) throw new InvalidRequestError(`plugin not found in the catalog: ${entry.type}`);
      backend = await registration.factory({
        mount: info,
        storage: this.storageFor(entry, kind),
        logger: this.logger.child({ mount: info.path }),
        system: this.systemView(entry),
        options: { ...(entry.options ?? {}) },
      });
    }
    this.backends.set(entry.uuid, backend);
    return backend;
  }

  private storageFor(entry: MountEntry, kind: MountKind) {
    return this.core.barrier.view(`${kind === 'auth' ? 'auth' : 'logical'}/${entry.uuid}/`);
  }

  private async rebuildRoutes(): Promise<void> {
    const routes: Route[] = [];
    for (const [kind, entries] of [['secret', this.mounts], ['auth', this.auths]] as const) {
      for (const entry of entries) {
        const prefix = kind === 'auth' ? `auth/${entry.path}` : entry.path;
        const info: MountInfo = {
          path: prefix,
          type: entry.type,
          accessor: entry.accessor,
          uuid: entry.uuid,
          kind: entry.type === 'system' ? 'system' : entry.type === 'token' && kind === 'auth' ? 'token' : kind,
        };
        routes.push({ entry, kind, prefix, info, backend: await this.backendFor(entry, kind, info), storage: this.storageFor(entry, kind) });
      }
    }
    this.core.router.setRoutes(routes);
  }

  mountTable(kind: MountKind): readonly MountEntry[] {
    return kind === 'auth' ? this.auths : this.mounts;
  }

  /** Enable a secrets engine or auth method at `path` (no `auth/` prefix for auth methods). */
  async mount(kind: MountKind, path: string, spec: { type: string; description?: string; config?: Partial<MountEntry['config']>; options?: Record<string, string> | null; local?: boolean; seal_wrap?: boolean }): Promise<void> {
    path = normaliseMountPath(path);
    const registration = this.core.registry.get(spec.type);
    const builtinAuth = kind === 'auth' && spec.type === 'token';
    if (!registration || builtinAuth || spec.type === 'system' || (kind === 'auth') !== isAuthType(this.core.registry, spec.type)) {
      throw new InvalidRequestError(`plugin not found in the catalog: ${spec.type}`);
    }
    const table = kind === 'auth' ? this.auths : this.mounts;
    const full = (kind === 'auth' ? 'auth/' : '') + path;
    const reserved = kind === 'secret' && /^(sys|auth|cubbyhole|identity)\//.test(path);
    if (reserved) throw new InvalidRequestError(`cannot mount '${path}' at a reserved path`);
    for (const existing of this.core.router.all()) {
      if (existing.prefix === full) throw new InvalidRequestError(`path is already in use at ${full}`);
      if (full.startsWith(existing.prefix) && existing.kind === kind && existing.prefix !== 'auth/') {
        throw new InvalidRequestError(`existing mount at ${existing.prefix}`);
      }
      if (existing.prefix.startsWith(full)) throw new InvalidRequestError(`path is already in use at ${existing.prefix}`);
    }
    const options = { ...(registration.impliedOptions?.[spec.type] ?? {}), ...(spec.options ?? {}) };
    const entry = newEntry(path, spec.type, spec.description || '', Object.keys(options).length ? options : kind === 'secret' && registration.type === 'kv' ? { version: '1' } : null, kind);
    entry.config = { ...entry.config, ...(spec.config ?? {}) };
    entry.local = spec.local ?? false;
    entry.seal_wrap = spec.seal_wrap ?? false;
    table.push(entry);
    try {
      await this.rebuildRoutes();
    } catch (error) {
      table.pop();
      await this.rebuildRoutes();
      throw error;
    }
    await putJSON(this.core.barrier.view('core/'), kind === 'auth' ? 'auth' : 'mounts', table);
  }

  async unmount(kind: MountKind, path: string): Promise<void> {
    path = normaliseMountPath(path);
    const table = kind === 'auth' ? this.auths : this.mounts;
    const index = table.findIndex((e) => e.path === path);
    if (index === -1) return;
    const entry = table[index]!;
    if (entry.type === 'system' || entry.type === 'token' || entry.type === 'cubbyhole') throw new InvalidRequestError(`cannot unmount "${path}"`);
    if (kind === 'auth') {
      for await (const token of this.tokenStore.entries()) if (token.mountAccessor === entry.accessor) await this.tokenStore.revokeTree(token.idHash);
    }
    table.splice(index, 1);
    await putJSON(this.core.barrier.view('core/'), kind === 'auth' ? 'auth' : 'mounts', table);
    const backend = this.backends.get(entry.uuid);
    this.backends.delete(entry.uuid);
    await backend?.close?.();
    await this.rebuildRoutes();
    const storage = this.storageFor(entry, kind);
    for (const key of await listRecursive(storage)) await storage.delete(key);
  }

  async tune(kind: MountKind, path: string, config: Partial<MountEntry['config']>, description?: string): Promise<void> {
    path = normaliseMountPath(path);
    const table = kind === 'auth' ? this.auths : this.mounts;
    const entry = table.find((e) => e.path === path);
    if (!entry) throw new InvalidRequestError(`no mount entry found at ${path}`);
    entry.config = { ...entry.config, ...config };
    if (description !== undefined) entry.description = description;
    await putJSON(this.core.barrier.view('core/'), kind === 'auth' ? 'auth' : 'mounts', table);
  }

  authMountHandle(accessor: string): AuthMountHandle | undefined {
    const route = this.core.router.byAccessor(accessor);
    if (!route) return undefined;
    return {
      backend: route.backend,
      mount: route.info,
      storage: route.storage,
      defaultTtl: route.entry.config.default_lease_ttl || this.core.defaultLeaseTtl,
      maxTtl: route.entry.config.max_lease_ttl || this.core.maxLeaseTtl,
    };
  }

  async dropCubbyhole(entry: TokenEntry): Promise<void> {
    const route = this.core.router.all().find((r) => r.entry.type === 'cubbyhole');
    if (!route) return;
    const view = route.storage.sub(cubbyholePrefix(entry.idHash));
    for (const key of await listRecursive(view)) await view.delete(key);
  }

  async enableAudit(entry: AuditDeviceEntry): Promise<void> {
    await this.audit.enable(entry);
    await putJSON(this.core.barrier.view('sys/'), 'audit-devices', this.audit.list());
  }

  async disableAudit(path: string): Promise<void> {
    await this.audit.disable(path);
    await putJSON(this.core.barrier.view('sys/'), 'audit-devices', this.audit.list());
  }

  private sweeper: NodeJS.Timeout | undefined;
  private readonly background = new Set<Promise<unknown>>();

  /** Log the outcome of a background token tidy; `close` waits for it. */
  track(running: Promise<number>): void {
    const done = running.then(
      (revoked) => this.logger.info({ revoked }, 'token tidy finished'),
      (error: unknown) => this.logger.error({ err: error }, 'token tidy failed'),
    );
    this.background.add(done);
    void done.finally(() => this.background.delete(done));
  }

  /** Every five minutes, tidy expired tokens away (expired tokens already stop working at once). */
  startSweeper(intervalMs = 5 * 60_000): void {
    this.sweeper = setInterval(() => this.track(this.tokenStore.tidy()), intervalMs);
    this.sweeper.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all(this.background);
    for (const backend of this.backends.values()) await backend.close?.();
    this.backends.clear();
    await this.audit.close();
    this.policies.invalidate();
  }

  /** The caller's token entry and ACL, or 403. */
  async authenticate(token: string | undefined): Promise<{ entry: TokenEntry; token: string }> {
    if (!token) throw new PermissionDeniedError();
    const entry = await this.tokenStore.lookup(token);
    if (!entry) throw new PermissionDeniedError();
    return { entry, token };
  }

  async handle(input: LogicalInput): Promise<LogicalResult> {
    const requestId = randomUUID();
    let path = input.path.replace(/^\/+/, '');
    let operation: Operation = input.operation === 'write' ? 'update' : input.operation;
    const route = this.core.router.match(path);
    if (!route) throw new NotFoundError(`no handler for route "${path}". route entry not found.`);
    if (operation === 'list' && !path.endsWith('/') && path + '/' !== route.prefix) path += '/';
    const relative = path.length < route.prefix.length ? '' : path.slice(route.prefix.length);

    const base = {
      path: relative,
      data: input.data,
      storage: route.storage,
      mount: route.info,
      remoteAddress: input.remoteAddress,
      headers: input.headers,
      mergePatch: input.mergePatch ?? false,
    };
    let caller: Caller | undefined;
    let entry: TokenEntry | undefined;
    const unauthenticated = route.backend.isUnauthenticated(relative);
    if (!unauthenticated || input.token) {
      try {
        const authenticated = await this.authenticate(input.token);
        entry = authenticated.entry;
      } catch (error) {
        if (!unauthenticated) throw error;
      }
    }
    if (input.operation === 'write') {
      const exists = await route.backend.existenceCheck({ ...base, operation: 'update', caller: entry && this.callerOf(entry, input.token!, false) });
      operation = exists === false ? 'create' : 'update';
    }
    if (!unauthenticated) {
      entry = entry!;
      if (entry.boundCidrs.length && !cidrsContain(entry.boundCidrs, input.remoteAddress)) throw new PermissionDeniedError();
      const acl = await this.policies.acl(entry.policies);
      let sudo = acl.root;
      if (operation !== 'help') {
        const decision = acl.allowOperation(operation, path, input.data);
        sudo = decision.sudo;
        if (!decision.allowed || (route.backend.isSudo(relative) && !decision.sudo)) throw new PermissionDeniedError('acl');
      }
      caller = this.callerOf(entry, input.token!, sudo);
    } else if (entry) {
      caller = this.callerOf(entry, input.token!, false);
    }

    if (caller && entry) this.callerEntries.set(caller, entry);
    const request: Request = { ...base, operation, caller };
    const event: AuditEvent = {
      id: requestId,
      operation,
      path,
      mountType: route.entry.type,
      remoteAddress: input.remoteAddress,
      auth: entry && input.token ? auditAuth(entry, input.token) : undefined,
      data: input.data,
    };
    this.audit.logRequest(event);

    let revokeAfterUse = false;
    if (caller && entry && entry.numUses > 0 && !unauthenticated) {
      entry.numUses -= 1;
      if (entry.numUses === 0) revokeAfterUse = true;
      else await this.tokenStore.save(entry);
    }
    try {
      const response = await route.backend.handleRequest(request);
      let auth = response?.tokenAuth;
      const warnings = [...(response?.warnings ?? [])];
      if (response?.auth) {
        if (route.kind !== 'auth') throw new Error(`backend at ${route.prefix} returned a login outside auth/`);
        const handle = this.authMountHandle(route.entry.accessor)!;
        const issued = await this.tokens.issueForLogin(response.auth, handle, relative);
        auth = issued.auth;
        warnings.push(...issued.warnings);
      }
      const result: LogicalResult = {
        statusCode: response?.statusCode,
        data: response?.data,
        auth,
        warnings,
        leaseDuration: response?.leaseDuration,
        raw: response?.raw,
        mountType: route.entry.type,
        operation,
        requestId,
      };
      this.audit.logResponse(event, { data: result.data, auth: result.auth, warnings: result.warnings });
      return result;
    } catch (error) {
      this.audit.logResponse(event, undefined, (error as Error).message);
      throw error;
    } finally {
      if (revokeAfterUse && entry) await this.tokenStore.revokeTree(entry.idHash);
    }
  }

  callerOf(entry: TokenEntry, token: string, sudo: boolean): Caller {
    return {
      token,
      tokenHash: entry.idHash,
      accessor: entry.accessor,
      policies: entry.policies,
      displayName: entry.displayName,
      entityId: entry.entityId,
      metadata: entry.meta,
      tokenType: entry.type,
      isRoot: entry.policies.includes('root'),
      sudo: sudo || entry.policies.includes('root'),
    };
  }
}

function auditAuth(entry: TokenEntry, token: string): AuditAuth {
  return {
    client_token: token,
    accessor: entry.accessor,
    display_name: entry.displayName,
    policies: entry.policies,
    token_policies: entry.policies,
    metadata: entry.meta,
    entity_id: entry.entityId,
    token_type: entry.type,
  };
}

function isAuthType(registry: BackendRegistry, type: string): boolean {
  const registration = registry.get(type);
  return registration !== undefined && authMethods.includes(registration);
}

export function normaliseMountPath(path: string): string {
  const trimmed = path.replace(/^\/+/, '').replace(/\/+$/, '');
  if (trimmed === '' || trimmed.split('/').some((s) => s === '..' || s === '.')) throw new InvalidRequestError(`invalid mount path ${JSON.stringify(path)}`);
  return `${trimmed}/`;
}

function newEntry(path: string, type: string, description: string, options: Record<string, string> | null, kind: MountKind = 'secret'): MountEntry {
  return {
    path,
    type,
    description,
    accessor: kind === 'auth' ? `auth_${type}_${hex8()}` : `${type}_${hex8()}`,
    uuid: randomUUID(),
    config: { default_lease_ttl: 0, max_lease_ttl: 0, force_no_cache: false },
    options,
    local: false,
    seal_wrap: false,
    external_entropy_access: false,
    plugin_version: '',
  };
}

function cidrsContain(cidrs: readonly string[], address: string): boolean {
  const ip = address.replace(/^::ffff:/, '');
  return cidrs.some((cidr) => {
    const [net, bitsText] = cidr.split('/');
    if (!net) return false;
    if (!bitsText) return net === ip;
    const toInt = (a: string) => a.split('.').reduce((acc, o) => (acc << 8) + Number(o), 0) >>> 0;
    if (!/^\d+\.\d+\.\d+\.\d+$/.test(ip) || !/^\d+\.\d+\.\d+\.\d+$/.test(net)) return false;
    const bits = Number(bitsText);
    const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
    return (toInt(ip) & mask) === (toInt(net) & mask);
  });
}
