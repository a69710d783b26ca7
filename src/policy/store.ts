/**
 * The engine's state: policies and base documents, held as one immutable `Snapshot`
 * ({compiled policy set, data, bundles}). A decision takes the current snapshot once and evaluates
 * against it alone, so it never sees half of a change. Every change builds the complete next snapshot
 * first (parse, compile the whole new module set, check data/rule overlaps), persists it when a
 * journal is configured, and only then swaps it in; a change that fails leaves the old snapshot in
 * place. Changes run one at a time, in arrival order.
 */
import { compile, parseModule, RegoError, RegoErrors, type CompiledPolicy, type PreparedQuery } from '../rego/index.js';
import { conflictingPaths, definesDocument, packagePath, rulePaths } from './documents.js';
import { isObject, makeDir, readPath, StoreError, write, type Json, type JsonObject, type PatchOp } from './data-tree.js';
import { ApiError, Code, Message } from './errors.js';

/** Who put a module there: the Policy API, a file named on the command line, or a bundle. */
export type Owner = { readonly kind: 'api' } | { readonly kind: 'file' } | { readonly kind: 'bundle'; readonly name: string };

export interface PolicyRecord {
  readonly id: string;
  readonly raw: string;
  readonly owner: Owner;
}

export interface BundleRecord {
  readonly name: string;
  readonly revision: string;
  /** Data and package roots the bundle owns (`['']` owns everything). */
  readonly roots: readonly string[];
}

export interface ModuleSourceRecord {
  readonly id: string;
  readonly raw: string;
}

/** A data write: `op` at `path` (below data) with `value`. */
export interface DataOperation {
  readonly op: PatchOp;
  readonly path: readonly string[];
  readonly value?: Json;
}

/** Durable storage of what the API changed; each call completes before the change becomes visible. */
export interface StoreJournal {
  putPolicy(id: string, raw: string): Promise<void>;
  deletePolicy(id: string): Promise<void>;
  putData(data: JsonObject): Promise<void>;
}

const MAX_CACHED_QUERIES = 256;

/** One consistent state of the engine. Immutable; prepared queries are cached on it. */
export class Snapshot {
  private readonly refQueries = new Map<string, PreparedQuery>();
  private readonly adhocQueries = new Map<string, PreparedQuery>();
  private rulePathCache?: string[][];

  constructor(
    readonly revision: number,
    readonly policies: ReadonlyMap<string, PolicyRecord>,
    readonly compiled: CompiledPolicy,
    readonly data: JsonObject,
    readonly bundles: ReadonlyMap<string, BundleRecord>,
    readonly regoVersion: 'v0' | 'v1',
  ) {}

  /** The prepared query for the document at `data.<path>` (compiled once per snapshot). */
  refQuery(path: readonly string[]): PreparedQuery {
    const key = path.join('\u0000');
    let query = this.refQueries.get(key);
    if (!query) {
      query = this.compiled.prepareRef(path);
      remember(this.refQueries, key, query);
    }
    return query;
  }

  /** An ad-hoc query (Query API); throws RegoErrors for a parse or compile error. */
  adhocQuery(text: string): PreparedQuery {
    let query = this.adhocQueries.get(text);
    if (!query) {
      query = this.compiled.prepareQuery(text, { regoVersion: this.regoVersion });
      remember(this.adhocQueries, text, query);
    }
    return query;
  }

  get rulePaths(): string[][] {
    return (this.rulePathCache ??= rulePaths(this.compiled.modules.values()));
  }

  /** Does some rule define exactly `data.<path>`? */
  definesDocument(path: readonly string[]): boolean {
    return definesDocument(this.rulePaths, path);
  }

  ast(id: string): unknown {
    return this.compiled.modules.get(id) ?? null;
  }
}

function remember<V>(cache: Map<string, V>, key: string, value: V): void {
  if (cache.size >= MAX_CACHED_QUERIES) cache.delete(cache.keys().next().value!);
  cache.set(key, value);
}

export interface StoreOptions {
  readonly regoVersion?: 'v0' | 'v1';
  readonly journal?: StoreJournal;
  /** The state to start from (persisted earlier). */
  readonly initial?: { readonly policies: readonly ModuleSourceRecord[]; readonly data: JsonObject };
}

export class PolicyStore {
  private snapshot: Snapshot;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly listeners = new Set<(snapshot: Snapshot) => void>();
  readonly regoVersion: 'v0' | 'v1';
  private readonly journal?: StoreJournal;

  /** Throws RegoErrors when the initial policies do not compile. */
  constructor(options: StoreOptions = {}) {
    this.regoVersion = options.regoVersion ?? 'v1';
    this.journal = options.journal;
    const policies = new Map<string, PolicyRecord>();
    for (const { id, raw } of options.initial?.policies ?? []) policies.set(id, { id, raw, owner: { kind: 'api' } });
    this.snapshot = this.build(0, policies, options.initial?.data ?? {}, new Map());
  }

  /** The state every decision should use, taken once per request. */
  get current(): Snapshot {
    return this.snapshot;
  }

  /** Called after every change with the new snapshot. */
  onChange(listener: (snapshot: Snapshot) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Policy API PUT: returns false when the text is unchanged (nothing to do). */
  putPolicy(id: string, raw: string): Promise<boolean> {
    return this.exclusive(async () => {
      const old = this.snapshot;
      const existing = old.policies.get(id);
      if (existing && existing.raw === raw) return false;
      if (existing?.owner.kind === 'bundle') throw ownedByBundle(id, existing.owner.name);
      let ast: unknown;
      try {
        ast = parseModule({ id, text: raw }, { regoVersion: this.regoVersion });
      } catch (error) {
        throw asCompileError(error);
      }
      const pkg = packagePath(ast);
      if (pkg) checkScope(old, pkg);
      const policies = new Map(old.policies).set(id, { id, raw, owner: { kind: 'api' } });
      const next = this.build(old.revision + 1, policies, old.data, old.bundles, { checkConflicts: true });
      await this.journal?.putPolicy(id, raw);
      this.swap(next);
      return true;
    });
  }

  /** Policy API DELETE: refuses when the remaining modules no longer compile (they depend on it). */
  deletePolicy(id: string): Promise<void> {
    return this.exclusive(async () => {
      const old = this.snapshot;
      const existing = old.policies.get(id);
      if (!existing) throw new StoreError('not_found', `policy id ${JSON.stringify(id)}`);
      if (existing.owner.kind === 'bundle') throw ownedByBundle(id, existing.owner.name);
      const policies = new Map(old.policies);
      policies.delete(id);
      let next: Snapshot;
      try {
        next = this.build(old.revision + 1, policies, old.data, old.bundles);
      } catch (error) {
        if (error instanceof ApiError) throw new ApiError(400, Code.invalidOperation, error.message, error.errors);
        throw error;
      }
      await this.journal?.deletePolicy(id);
      this.swap(next);
    });
  }

  /**
   * Data API PUT: create parents like `mkdir -p` and write `value` at `path`. With
   * `ifNoneMatch`, an existing document is left alone and the result is 'not_modified'.
   */
  putData(path: readonly string[], value: Json, ifNoneMatch = false): Promise<'written' | 'not_modified'> {
    return this.exclusive(async () => {
      const old = this.snapshot;
      checkScope(old, path);
      let data = old.data;
      if (readPath(data, path) === undefined) {
        if (path.length > 0) data = makeDir(data, path.slice(0, -1));
      } else if (ifNoneMatch) {
        return 'not_modified' as const;
      }
      data = write(data, 'add', path, value);
      await this.commitData(old, data);
      return 'written' as const;
    });
  }

  /** Data API PATCH (and DELETE, as one remove): all operations or none. */
  patchData(operations: readonly DataOperation[]): Promise<void> {
    return this.exclusive(async () => {
      const old = this.snapshot;
      let data = old.data;
      for (const { op, path, value } of operations) {
        checkScope(old, path);
        data = write(data, op, path, value);
      }
      await this.commitData(old, data);
    });
  }

  /**
   * Replace the modules and data that came from files (start-up and `-w` reloads) and activate
   * bundles, in one change. Throws ApiError when the result does not compile; nothing changes then.
   */
  load(files: { readonly modules: readonly ModuleSourceRecord[]; readonly data: readonly { path: readonly string[]; value: Json }[] }, bundles: readonly LoadedBundleState[] = []): Promise<void> {
    return this.exclusive(async () => {
      const old = this.snapshot;
      const policies = new Map([...old.policies].filter(([, p]) => p.owner.kind !== 'file'));
      for (const { id, raw } of files.modules) policies.set(id, { id, raw, owner: { kind: 'file' } });
      let data = old.data;
      for (const { path, value } of files.data) data = mergeAt(data, path, value);
      const bundleRecords = new Map(old.bundles);
      for (const bundle of bundles) {
        for (const [id, p] of policies) if (p.owner.kind === 'bundle' && p.owner.name === bundle.name) policies.delete(id);
        for (const { id, raw } of bundle.modules) policies.set(id, { id, raw, owner: { kind: 'bundle', name: bundle.name } });
        for (const root of bundle.roots) data = root === '' ? {} : removeIfPresent(data, root.split('/'));
        data = deepMerge(data, bundle.data);
        bundleRecords.set(bundle.name, { name: bundle.name, revision: bundle.revision, roots: bundle.roots });
      }
      const next = this.build(old.revision + 1, policies, data, bundleRecords, { checkConflicts: true });
      this.swap(next);
    });
  }

  private async commitData(old: Snapshot, data: JsonObject): Promise<void> {
    const conflicts = conflictingPaths(old.rulePaths, data);
    if (conflicts.length > 0) throw ApiError.badRequest(conflictMessage(conflicts));
    const next = new Snapshot(old.revision + 1, old.policies, old.compiled, data, old.bundles, old.regoVersion);
    await this.journal?.putData(data);
    this.swap(next);
  }

  /** Compile `policies` into a snapshot; throws ApiError (400, compile errors) if they do not compile. */
  private build(revision: number, policies: ReadonlyMap<string, PolicyRecord>, data: JsonObject, bundles: ReadonlyMap<string, BundleRecord>, options: { checkConflicts?: boolean } = {}): Snapshot {
    let compiled: CompiledPolicy;
    try {
      compiled = compile([...policies.values()].map(({ id, raw }) => ({ id, text: raw })), { regoVersion: this.regoVersion });
    } catch (error) {
      throw asCompileError(error);
    }
    const snapshot = new Snapshot(revision, policies, compiled, data, bundles, this.regoVersion);
    if (options.checkConflicts) {
      const conflicts = conflictingPaths(snapshot.rulePaths, data);
      if (conflicts.length > 0) {
        throw ApiError.badRequest(
          Message.compileModule,
          conflicts.map((path) => ({ code: 'rego_compile_error', message: `conflicting rule for data path ${path.join('/')} found` })),
        );
      }
    }
    return snapshot;
  }

  private swap(next: Snapshot): void {
    this.snapshot = next;
    for (const listener of this.listeners) listener(next);
  }

  private exclusive<T>(change: () => Promise<T>): Promise<T> {
    const run = this.queue.then(change, change);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

export interface LoadedBundleState {
  readonly name: string;
  readonly revision: string;
  readonly roots: readonly string[];
  readonly modules: readonly ModuleSourceRecord[];
  readonly data: JsonObject;
}

function asCompileError(error: unknown): unknown {
  if (error instanceof RegoErrors || error instanceof RegoError) return ApiError.rego(Message.compileModule, error);
  return error;
}

function ownedByBundle(path: string, bundle: string): ApiError {
  return ApiError.badRequest(`path ${path} is owned by bundle ${JSON.stringify(bundle)}`);
}

/** OPA's bundle scope rule: no API write below (or above) a root an active bundle owns. */
function checkScope(snapshot: Snapshot, path: readonly string[]): void {
  if (snapshot.bundles.size === 0) return;
  if (path.length === 0) throw ApiError.badRequest("can't write to document root with bundle roots configured");
  for (const bundle of snapshot.bundles.values()) {
    for (const root of bundle.roots) {
      if (root === '') throw ApiError.badRequest(`all paths owned by bundle ${JSON.stringify(bundle.name)}`);
      const parts = root.split('/');
      if (parts.every((p, i) => i >= path.length || p === path[i])) throw ownedByBundle(path.join('/'), bundle.name);
    }
  }
}

function conflictMessage(conflicts: readonly string[][]): string {
  const errors = conflicts.map((path) => `rego_compile_error: conflicting rule for data path ${path.join('/')} found`);
  return errors.length === 1 ? `1 error occurred: ${errors[0]}` : `${errors.length} errors occurred:\n${errors.join('\n')}`;
}

/** Put `value` at `path`, merging objects with what is there (how `opa run` layers data files). */
function mergeAt(data: JsonObject, path: readonly string[], value: Json): JsonObject {
  if (path.length === 0) return isObject(value) ? deepMerge(data, value) : data;
  const base = makeDir(data, path.slice(0, -1));
  const existing = readPath(base, path);
  const merged = isObject(existing) && isObject(value) ? deepMerge(existing, value) : value;
  return write(base, 'add', path, merged);
}

function deepMerge(a: JsonObject, b: JsonObject): JsonObject {
  const out: JsonObject = { ...a };
  for (const [key, value] of Object.entries(b)) {
    const current = out[key];
    out[key] = isObject(current) && isObject(value) ? deepMerge(current, value) : value;
  }
  return out;
}

function removeIfPresent(data: JsonObject, path: readonly string[]): JsonObject {
  return readPath(data, path) === undefined ? data : write(data, 'remove', path);
}
