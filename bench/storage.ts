/**
 * Puts, gets, lists and watch deliveries per second of each Storage backend (memory, SQLite, and
 * etcd when /usr/bin/etcd exists: started here on loopback), each beside the same operation done
 * with better-sqlite3 directly on a plain table in the same run, and the ratio backend / baseline.
 *
 * The baseline is what a service would write without our layer: one table (key PRIMARY KEY, value),
 * WAL with synchronous=FULL like our SQLite backend (so both pay the same fsync per write), an upsert
 * per put, a point select per get, a range select per list, and for watch an append to a log table
 * followed by a select of the rows after the last one seen (a change feed by polling after each
 * commit). Loops are bounded; the whole run takes well under a minute.
 *
 *   npm run bench -- storage
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { openStorage, type Storage, type WatchEvent } from '../src/storage/index.js';
import { etcdMissing, startEtcd, type EtcdServer } from '../test/storage/etcd-server.js';

const PUTS = 500;
const GETS = 5000;
const LISTS = 200;
const LIST_SIZE = 100;
const WATCHED = 500;
/** Writers in flight at once during the watch run: delivery, not one write's latency, is measured. */
const WATCH_WRITERS = 16;
/** Each operation alternates between the backend and the baseline this many times, to share the machine's drift. */
const ROUNDS = 5;
const VALUE = new Uint8Array(256).fill(7);

type Operation = 'put' | 'get' | 'list' | 'watch';
const COUNTS: Record<Operation, number> = { put: PUTS, get: GETS, list: LISTS, watch: WATCHED };

/** A thing measured: each operation does `count` of itself, numbering its keys from `from`. */
interface Subject {
  /** Unmeasured setup: the keys that lists read. */
  prepare(): Promise<void>;
  readonly run: Record<Operation, (from: number, count: number) => Promise<void>>;
  close(): Promise<void>;
}

const listKey = (i: number): string => `/bench/list/${String(i).padStart(3, '0')}`;

function storageSubject(storage: Storage): Subject {
  return {
    async prepare() {
      for (let i = 0; i < LIST_SIZE; i++) await storage.put(listKey(i), VALUE);
    },
    run: {
      async put(from, count) {
        for (let i = from; i < from + count; i++) await storage.put(`/bench/put/${i}`, VALUE);
      },
      async get(from, count) {
        for (let i = from; i < from + count; i++) await storage.get(`/bench/put/${i % PUTS}`);
      },
      async list(_from, count) {
        for (let i = 0; i < count; i++) {
          const { items } = await storage.list('/bench/list/', { limit: LIST_SIZE });
          if (items.length !== LIST_SIZE) throw new Error(`listed ${items.length}`);
        }
      },
      async watch(from, count) {
        let delivered = 0;
        let done!: () => void;
        const all = new Promise<void>((resolve) => (done = resolve));
        const watcher = await storage.watch('/bench/watch/', {}, (events: readonly WatchEvent[]) => {
          delivered += events.length;
          if (delivered >= count) done();
        });
        let next = from;
        const writer = async (): Promise<void> => {
          while (next < from + count) await storage.put(`/bench/watch/${next++}`, VALUE);
        };
        await Promise.all(Array.from({ length: WATCH_WRITERS }, writer));
        await all;
        watcher.close();
      },
    },
    close: () => storage.close(),
  };
}

/** better-sqlite3 directly: the baseline. */
function baselineSubject(file: string): Subject {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(`CREATE TABLE kv (key TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
           CREATE TABLE log (id INTEGER PRIMARY KEY, key TEXT NOT NULL, value BLOB NOT NULL);`);
  const upsert = db.prepare('INSERT INTO kv (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
  const select = db.prepare('SELECT key, value FROM kv WHERE key = ?');
  const range = db.prepare('SELECT key, value FROM kv WHERE key >= ? AND key < ? ORDER BY key LIMIT ?');
  const append = db.prepare('INSERT INTO log (key, value) VALUES (?, ?)');
  const since = db.prepare('SELECT id, key, value FROM log WHERE id > ? ORDER BY id');
  const value = Buffer.from(VALUE);
  let last = 0;
  return {
    async prepare() {
      for (let i = 0; i < LIST_SIZE; i++) upsert.run(listKey(i), value);
    },
    run: {
      async put(from, count) {
        for (let i = from; i < from + count; i++) upsert.run(`/bench/put/${i}`, value);
      },
      async get(from, count) {
        for (let i = from; i < from + count; i++) select.get(`/bench/put/${i % PUTS}`);
      },
      async list(_from, count) {
        for (let i = 0; i < count; i++) {
          const rows = range.all('/bench/list/', '/bench/list0', LIST_SIZE);
          if (rows.length !== LIST_SIZE) throw new Error(`listed ${rows.length}`);
        }
      },
      async watch(from, count) {
        let delivered = 0;
        for (let i = from; i < from + count; i++) {
          append.run(`/bench/watch/${i}`, value);
          const rows = since.all(last) as { id: number }[];
          if (rows.length > 0) last = rows.at(-1)!.id;
          delivered += rows.length;
        }
        if (delivered !== count) throw new Error(`delivered ${delivered}`);
      },
    },
    async close() {
      db.close();
    },
  };
}

/** Operations per second of each subject, alternating between them round by round. */
async function compare(ours: Subject, baseline: Subject, operation: Operation): Promise<[number, number]> {
  const perRound = COUNTS[operation] / ROUNDS;
  const seconds = [0, 0];
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, subject] of [ours, baseline].entries()) {
      const start = performance.now();
      await subject.run[operation](round * perRound, perRound);
      seconds[i]! += (performance.now() - start) / 1000;
    }
  }
  return [COUNTS[operation] / seconds[0]!, COUNTS[operation] / seconds[1]!];
}

function format(rate: number): string {
  return Math.round(rate).toLocaleString('en-US').padStart(10);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-bench-storage-'));
  let etcd: EtcdServer | undefined;
  try {
    const backends: { name: string; open: () => Promise<Storage> }[] = [
      { name: 'memory', open: () => openStorage('memory:') },
      { name: 'sqlite', open: () => openStorage(`sqlite:${path.join(dir, 'store.db')}`) },
    ];
    const missing = etcdMissing();
    if (missing) console.log(`etcd: skipped, ${missing}`);
    else {
      etcd = await startEtcd();
      const endpoint = etcd.endpoint;
      backends.push({ name: 'etcd', open: () => openStorage(`etcd://${endpoint}?prefix=/bench/`) });
    }

    console.log(`node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), files in ${os.tmpdir()}`);
    console.log(`puts ${PUTS}, gets ${GETS}, lists ${LISTS} of ${LIST_SIZE} keys, watch ${WATCHED} events from ${WATCH_WRITERS} writers; ${ROUNDS} alternating rounds\n`);
    console.log(`${'operation'.padEnd(10)}${'backend'.padEnd(8)}${'ops/s'.padStart(10)}   ${'better-sqlite3 ops/s'.padStart(20)}   ratio`);

    let round = 0;
    for (const backend of backends) {
      // A fresh baseline file beside each backend, so that both start from the same empty state.
      const baseline = baselineSubject(path.join(dir, `baseline-${round++}.db`));
      const ours = storageSubject(await backend.open());
      await ours.prepare();
      await baseline.prepare();
      for (const operation of Object.keys(COUNTS) as Operation[]) {
        const [mine, theirs] = await compare(ours, baseline, operation);
        console.log(`${operation.padEnd(10)}${backend.name.padEnd(8)}${format(mine)}   ${format(theirs).padStart(20)}   ${(mine / theirs).toFixed(2)}`);
      }
      await ours.close();
      await baseline.close();
    }
  } finally {
    await etcd?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
