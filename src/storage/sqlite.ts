/**
 * The SQLite backend (better-sqlite3): the embedded default, one database file.
 *
 * Durability: WAL journal with synchronous=FULL, so a write is on disk before its promise resolves.
 * The file is locked exclusively while open: a second process gets a clear "in use" error instead
 * of writes its watchers would never see. Inside one process, every store opened on the same file
 * shares one connection, so they see each other's writes and watch events.
 *
 * MVCC: every write of a key is a row (key, mod_revision); a row's `superseded` is the revision of the
 * next write to its key (NULL while it is the latest), and a deletion is a tombstone row (version 0).
 * So "the value at revision R" is `mod_revision <= R AND (superseded IS NULL OR superseded > R)`, and
 * the rows from revision R on are the watch history. `compact` deletes what no revision from the
 * compaction point on can see. The schema carries a version (PRAGMA user_version) and migrates forward.
 *
 * Watch events are delivered in-process after each commit; a watch from a past revision first reads
 * its catch-up from the table in the same synchronous step in which it registers, so nothing falls
 * between the two.
 */
import Database from 'better-sqlite3';
import { accessSync, chmodSync, constants, mkdirSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { WatchHub } from './watch-hub.js';
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
  tombstone,
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

/** "PCUS" in PRAGMA application_id marks a file as a Portcullis store. */
const APPLICATION_ID = 0x50435553;

/** migrations[n] brings a store from schema version n to n + 1; the last index + 1 is the current version. */
const migrations: readonly string[] = [
  `CREATE TABLE meta (
     name TEXT PRIMARY KEY,
     value INTEGER NOT NULL
   ) STRICT;
   INSERT INTO meta (name, value) VALUES ('compacted', 0);
   CREATE TABLE kv (
     key BLOB NOT NULL,
     mod_revision INTEGER NOT NULL,
     sub INTEGER NOT NULL,             -- position of the operation within its revision
     create_revision INTEGER NOT NULL, -- 0 for a tombstone
     version INTEGER NOT NULL,         -- 0 for a tombstone
     value BLOB NOT NULL,
     superseded INTEGER,               -- revision of the next write to this key; NULL while latest
     PRIMARY KEY (key, mod_revision)
   ) STRICT, WITHOUT ROWID;
   CREATE INDEX kv_live ON kv (key) WHERE superseded IS NULL AND version > 0;
   CREATE INDEX kv_by_revision ON kv (mod_revision, sub);`,
];
export const SCHEMA_VERSION = migrations.length;

/** Above every UTF-8 byte sequence (0xFF never occurs in UTF-8): the upper bound of the empty prefix. */
const AFTER_ALL_KEYS = Buffer.from([0xff]);

interface Row {
  key: Buffer;
  mod_revision: number;
  create_revision: number;
  version: number;
  value: Buffer;
}

interface EventRow extends Row {
  prev_mod_revision: number | null;
  prev_create_revision: number | null;
  prev_version: number | null;
  prev_value: Buffer | null;
}

/** One open database file, shared by every SqliteStorage of this process on that file. */
class SqliteFile {
  readonly db: Database.Database;
  revision: number;
  compacted: number;
  readonly stores = new Set<SqliteStorage>();
  readonly #statements;
  readonly #commit: Database.Transaction<(conditions: readonly Condition[], operations: readonly Operation[]) => { revision: number; events: WatchEvent[] }>;

  constructor(readonly name: string, db: Database.Database) {
    this.db = db;
    this.compacted = db.prepare("SELECT value FROM meta WHERE name = 'compacted'").pluck().get() as number;
    // Every write leaves a row at its revision, except a deletion that compaction has since removed;
    // compaction keeps the revision it compacted at, so the larger of the two is the current one.
    const newest = (db.prepare('SELECT max(mod_revision) FROM kv').pluck().get() as number | null) ?? 0;
    this.revision = Math.max(1, newest, this.compacted);
    const columns = 'key, mod_revision, create_revision, version, value';
    const visibleAt = 'key >= @from AND key < @to AND mod_revision <= @revision AND (superseded IS NULL OR superseded > @revision) AND version > 0';
    this.#statements = {
      latest: db.prepare(`SELECT ${columns} FROM kv WHERE key = ? ORDER BY mod_revision DESC LIMIT 1`),
      listLive: db.prepare(`SELECT ${columns} FROM kv WHERE key >= ? AND key < ? AND superseded IS NULL AND version > 0 ORDER BY key LIMIT ?`),
      countLive: db.prepare(`SELECT count(*) FROM kv WHERE key >= ? AND key < ? AND superseded IS NULL AND version > 0`).pluck(),
      listAt: db.prepare(`SELECT ${columns} FROM kv WHERE ${visibleAt} ORDER BY key LIMIT @limit`),
      countAt: db.prepare(`SELECT count(*) FROM kv WHERE ${visibleAt}`).pluck(),
      history: db.prepare(
        `SELECT e.key, e.mod_revision, e.create_revision, e.version, e.value,
                p.mod_revision AS prev_mod_revision, p.create_revision AS prev_create_revision,
                p.version AS prev_version, p.value AS prev_value
           FROM kv e LEFT JOIN kv p ON p.key = e.key AND p.superseded = e.mod_revision AND p.version > 0
          WHERE e.mod_revision >= ? AND e.key >= ? AND e.key < ?
          ORDER BY e.mod_revision, e.sub`,
      ),
      supersede: db.prepare('UPDATE kv SET superseded = ? WHERE key = ? AND mod_revision = ?'),
      insert: db.prepare('INSERT INTO kv (key, mod_revision, sub, create_revision, version, value) VALUES (?, ?, ?, ?, ?, ?)'),
      setCompacted: db.prepare("UPDATE meta SET value = ? WHERE name = 'compacted'"),
      compact: db.prepare('DELETE FROM kv WHERE superseded <= @revision OR (version = 0 AND mod_revision <= @revision)'),
    };
    this.#commit = db.transaction((conditions: readonly Condition[], operations: readonly Operation[]) => this.#apply(conditions, operations));
  }

  latest(key: string): KeyValue | undefined {
    const row = this.#statements.latest.get(Buffer.from(key, 'utf8')) as Row | undefined;
    return row && row.version > 0 ? toKeyValue(row) : undefined;
  }

  list(prefix: string, start: string, revision: number, limit: number): { items: KeyValue[]; remaining: number } {
    const from = Buffer.from(start, 'utf8');
    const to = prefix === '' ? AFTER_ALL_KEYS : Buffer.from(prefixEnd(Buffer.from(prefix, 'utf8'))!);
    const current = revision === this.revision;
    // One row more than asked tells whether anything remains; only then are the rest counted.
    const rowLimit = limit === 0 ? -1 : limit + 1;
    const rows = (current ? this.#statements.listLive.all(from, to, rowLimit) : this.#statements.listAt.all({ from, to, revision, limit: rowLimit })) as Row[];
    let remaining = 0;
    if (limit !== 0 && rows.length > limit) {
      rows.pop();
      const total = (current ? this.#statements.countLive.get(from, to) : this.#statements.countAt.get({ from, to, revision })) as number;
      remaining = total - rows.length;
    }
    return { items: rows.map(toKeyValue), remaining };
  }

  history(prefix: string, fromRevision: number): WatchEvent[] {
    const from = Buffer.from(prefix, 'utf8');
    const to = prefix === '' ? AFTER_ALL_KEYS : Buffer.from(prefixEnd(from)!);
    return (this.#statements.history.all(fromRevision, from, to) as EventRow[]).map(toEvent);
  }

  /** Checks the conditions and applies the operations in one SQLite transaction; returns the events. */
  commit(conditions: readonly Condition[], operations: readonly Operation[]): { revision: number; events: WatchEvent[] } {
    const result = this.#commit.immediate(conditions, operations);
    if (result.events.length > 0) {
      this.revision = result.revision;
      for (const store of this.stores) store.publish(result.events);
    }
    return result;
  }

  /** The body of one write transaction (run inside BEGIN IMMEDIATE … COMMIT). */
  #apply(conditions: readonly Condition[], operations: readonly Operation[]): { revision: number; events: WatchEvent[] } {
    for (const { key, modRevision } of conditions) {
      const actual = this.latest(key)?.modRevision ?? 0;
      if (actual !== modRevision) throw new ConflictError(key, actual, modRevision);
    }
    const revision = this.revision + 1;
    const events: WatchEvent[] = [];
    for (const operation of operations) {
      const key = Buffer.from(operation.key, 'utf8');
      const last = this.#statements.latest.get(key) as Row | undefined;
      const prev = last && last.version > 0 ? toKeyValue(last) : undefined;
      if (operation.type === 'delete' && !prev) continue;
      if (last) this.#statements.supersede.run(revision, key, last.mod_revision);
      if (operation.type === 'delete') {
        this.#statements.insert.run(key, revision, events.length, 0, 0, Buffer.alloc(0));
        events.push({ type: 'delete', kv: tombstone(operation.key, revision), prevKv: prev, revision });
      } else {
        const kv: KeyValue = {
          key: operation.key,
          value: new Uint8Array(operation.value),
          createRevision: prev ? prev.createRevision : revision,
          modRevision: revision,
          version: prev ? prev.version + 1 : 1,
        };
        this.#statements.insert.run(key, revision, events.length, kv.createRevision, kv.version, kv.value);
        events.push(prev ? { type: 'put', kv, prevKv: prev, revision } : { type: 'put', kv, revision });
      }
    }
    return { revision: events.length === 0 ? this.revision : revision, events };
  }

  compact(revision: number): void {
    this.db.transaction(() => {
      this.#statements.compact.run({ revision });
      this.#statements.setCompacted.run(revision);
    }).immediate();
    this.compacted = revision;
  }
}

/** Every open file of this process, by real path. */
const openFiles = new Map<string, SqliteFile>();

export class SqliteStorage implements Storage {
  #file: SqliteFile | undefined;
  readonly #hub = new WatchHub();

  private constructor(file: SqliteFile) {
    this.#file = file;
    file.stores.add(this);
  }

  /**
   * Opens (or creates) the store in the file at `file`. Errors are StorageErrors with one line naming
   * the file: `unavailable` when it cannot be opened or is in use, `corrupt` when it is not a
   * Portcullis store. An existing file that fails to open is never written to.
   */
  static open(file: string): SqliteStorage {
    const absolute = path.resolve(file);
    const shared = openFiles.get(realpathOrSelf(absolute));
    if (shared) return new SqliteStorage(shared);
    const opened = openFile(absolute);
    openFiles.set(realpathSync(absolute), opened);
    return new SqliteStorage(opened);
  }

  /** The database file. */
  get name(): string {
    return this.#file?.name ?? '(closed)';
  }

  async get(key: string): Promise<KeyValue | undefined> {
    const file = this.#open();
    checkKey(key);
    return this.#guard(() => file.latest(key));
  }

  async list(prefix: string, options?: ListOptions): Promise<ListResult> {
    const file = this.#open();
    const plan = planList(prefix, options);
    const revision = plan.revision ?? file.revision;
    if (revision < file.compacted) throw new CompactedError(revision, file.compacted);
    if (revision > file.revision) throw new FutureRevisionError(revision, file.revision);
    const { items, remaining } = this.#guard(() => file.list(prefix, plan.start, revision, plan.limit));
    if (remaining === 0) return { items, revision };
    return { items, revision, continue: encodeContinue(revision, items.at(-1)!.key), remaining };
  }

  async put(key: string, value: Uint8Array, options?: WriteOptions): Promise<WriteResult> {
    const file = this.#open();
    checkKey(key);
    checkValue(value);
    checkWriteOptions(options);
    return this.#write(file, { type: 'put', key, value }, options);
  }

  async delete(key: string, options?: WriteOptions): Promise<WriteResult> {
    const file = this.#open();
    checkKey(key);
    checkWriteOptions(options);
    return this.#write(file, { type: 'delete', key }, options);
  }

  async txn(transaction: Transaction): Promise<{ readonly revision: number }> {
    const file = this.#open();
    checkTransaction(transaction);
    const { revision } = this.#guard(() => file.commit(transaction.compare ?? [], transaction.operations));
    return { revision };
  }

  async watch(prefix: string, options: WatchOptions, listener: WatchListener, onError?: WatchErrorListener): Promise<Watcher> {
    const file = this.#open();
    checkPrefix(prefix);
    const fromRevision = options?.fromRevision ?? file.revision + 1;
    checkRevision('fromRevision', fromRevision, 1);
    if (fromRevision <= file.compacted) throw new CompactedError(fromRevision, file.compacted);
    const catchUp = fromRevision <= file.revision ? this.#guard(() => file.history(prefix, fromRevision)) : [];
    return this.#hub.add(prefix, fromRevision, catchUp, listener, onError);
  }

  async compact(revision: number): Promise<void> {
    const file = this.#open();
    checkRevision('revision', revision, 1);
    if (revision > file.revision) throw new InvalidArgumentError(`cannot compact at revision ${revision}: the current revision is ${file.revision}`);
    if (revision <= file.compacted) return;
    this.#guard(() => file.compact(revision));
  }

  async currentRevision(): Promise<number> {
    return this.#open().revision;
  }

  async compactedRevision(): Promise<number> {
    return this.#open().compacted;
  }

  async close(): Promise<void> {
    const file = this.#file;
    if (!file) return;
    this.#file = undefined;
    file.stores.delete(this);
    this.#hub.failAll(new UnavailableError(`the store in ${file.name} was closed`));
    if (file.stores.size === 0) {
      for (const [key, value] of openFiles) if (value === file) openFiles.delete(key);
      file.db.close();
    }
  }

  /** Called by the shared file after every commit. */
  publish(events: readonly WatchEvent[]): void {
    this.#hub.publish(events);
  }

  #open(): SqliteFile {
    if (!this.#file) throw new UnavailableError('the SQLite store is closed');
    return this.#file;
  }

  #write(file: SqliteFile, operation: Operation, options: WriteOptions | undefined): WriteResult {
    const conditions = options?.expectedRevision === undefined ? [] : [{ key: operation.key, modRevision: options.expectedRevision }];
    const { revision, events } = this.#guard(() => file.commit(conditions, [operation]));
    const prev = events[0]?.prevKv;
    return prev ? { revision, prev: copy(prev) } : { revision };
  }

  #guard<T>(work: () => T): T {
    try {
      return work();
    } catch (error) {
      throw translate(error, this.name);
    }
  }
}

function openFile(file: string): SqliteFile {
  const where = `SQLite store ${file}`;
  let existing: boolean;
  try {
    const info = statSync(file);
    if (!info.isFile()) throw new UnavailableError(`${where}: not a regular file`);
    accessSync(file, constants.R_OK | constants.W_OK);
    existing = true;
  } catch (error) {
    if (error instanceof StorageError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM') throw new UnavailableError(`${where}: not readable and writable`, { cause: error });
    if (code !== 'ENOENT') throw new UnavailableError(`${where}: ${code ?? String(error)}`, { cause: error });
    existing = false;
  }
  if (!existing) {
    try {
      mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    } catch (error) {
      throw new UnavailableError(`${where}: cannot create its directory (${(error as NodeJS.ErrnoException).code ?? String(error)})`, { cause: error });
    }
  }

  let db: Database.Database;
  try {
    db = new Database(file, { fileMustExist: existing, timeout: 0 });
    // Stored objects are only as private as the file (SQLite gives its -wal file the same mode).
    if (!existing) chmodSync(file, 0o600);
  } catch (error) {
    throw new UnavailableError(`${where}: cannot open (${describe(error)})`, { cause: error });
  }
  try {
    // Read before writing anything: a file that is not ours must stay exactly as it is.
    const version = db.pragma('user_version', { simple: true }) as number;
    const applicationId = db.pragma('application_id', { simple: true }) as number;
    if (existing) {
      const tables = db.prepare("SELECT count(*) FROM sqlite_schema WHERE type = 'table'").pluck().get() as number;
      if (applicationId !== APPLICATION_ID && (tables > 0 || version !== 0)) {
        throw new StorageError('corrupt', `${where}: not a Portcullis store (a SQLite database with other contents)`);
      }
    }
    if (version > SCHEMA_VERSION) {
      throw new StorageError('corrupt', `${where}: written by a newer Portcullis (schema ${version}; this version reads up to ${SCHEMA_VERSION})`);
    }
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    // BEGIN IMMEDIATE takes the write lock, which EXCLUSIVE mode then keeps until close; a store
    // already at the current schema writes nothing here.
    db.transaction(() => {
      if (version === SCHEMA_VERSION) return;
      for (let from = version; from < SCHEMA_VERSION; from++) db.exec(migrations[from]!);
      db.pragma(`application_id = ${APPLICATION_ID}`);
      db.pragma(`user_version = ${SCHEMA_VERSION}`);
    }).immediate();
    return new SqliteFile(file, db);
  } catch (error) {
    db.close();
    if (error instanceof StorageError) throw error;
    throw translate(error, file, true);
  }
}

/** SQLite's failures as StorageErrors naming the file. */
function translate(error: unknown, file: string, opening = false): unknown {
  if (error instanceof StorageError || !(error instanceof Database.SqliteError)) return error;
  const where = `SQLite store ${file}`;
  if (error.code === 'SQLITE_NOTADB' || error.code.startsWith('SQLITE_CORRUPT')) {
    return new StorageError('corrupt', `${where}: not a SQLite database, or damaged (${error.message})`, { cause: error });
  }
  if (error.code.startsWith('SQLITE_BUSY') || error.code.startsWith('SQLITE_LOCKED')) {
    return new UnavailableError(`${where}: in use by another process`, { cause: error });
  }
  return new UnavailableError(`${where}: ${opening ? 'cannot open: ' : ''}${error.message} (${error.code})`, { cause: error });
}

function toKeyValue(row: Row): KeyValue {
  return {
    key: row.key.toString('utf8'),
    value: bytesOf(row.value),
    createRevision: row.create_revision,
    modRevision: row.mod_revision,
    version: row.version,
  };
}

function toEvent(row: EventRow): WatchEvent {
  const key = row.key.toString('utf8');
  const prevKv: KeyValue | undefined =
    row.prev_mod_revision === null
      ? undefined
      : { key, value: bytesOf(row.prev_value!), createRevision: row.prev_create_revision!, modRevision: row.prev_mod_revision, version: row.prev_version! };
  if (row.version === 0) return { type: 'delete', kv: tombstone(key, row.mod_revision), prevKv, revision: row.mod_revision };
  const kv = toKeyValue(row);
  return prevKv ? { type: 'put', kv, prevKv, revision: row.mod_revision } : { type: 'put', kv, revision: row.mod_revision };
}

/** A plain Uint8Array over the Buffer SQLite gave us (each read gets its own). */
function bytesOf(buffer: Buffer): Uint8Array {
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

function copy(kv: KeyValue): KeyValue {
  return { ...kv, value: kv.value.slice() };
}

function realpathOrSelf(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
