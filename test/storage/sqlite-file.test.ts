// The SQLite backend as a file: durable across restarts and SIGKILL, shared inside one process,
// locked against a second one, and never overwriting a file it cannot read.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { openStorage, StorageError } from '../../src/storage/index.js';
import { SqliteStorage } from '../../src/storage/sqlite.js';
import { EventCollector } from './suite.js';

const dir = mkdtempSync(path.join(tmpdir(), 'portcullis-sqlite-file-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const WRITER = fileURLToPath(new URL('./fixtures/writer.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const text = (value: Uint8Array): string => new TextDecoder().decode(value);
const valueOf = (i: number): string => `value ${i} `.repeat(1 + (i % 7));

async function openFails(url: string, code: string, message: string): Promise<void> {
  await assert.rejects(openStorage(url), (error: unknown) => {
    assert.ok(error instanceof StorageError, String(error));
    assert.equal(error.code, code);
    assert.equal(error.message, message);
    assert.ok(!error.message.includes('\n'));
    return true;
  });
}

/** Starts the writer fixture; resolves once it has the store open. */
function startWriter(file: string, mode: 'write' | 'hold', onKey: (key: string) => void = () => {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', WRITER, file, mode], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`writer exited early (${code ?? signal})`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line === 'ready') resolve(child);
      else onKey(line);
    });
  });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.removeAllListeners('exit');
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

describe('SQLite store file', () => {
  it('keeps values, revision, history and the compaction point across a restart', async () => {
    const file = path.join(dir, 'nested', 'deeper', 'restart.db');
    const first = await openStorage(`sqlite:${file}`);
    const { revision: r1 } = await first.put('/a', bytes('1'));
    await first.put('/a', bytes('2'));
    await first.put('/b', bytes('b'));
    await first.delete('/b');
    await first.compact(r1 + 1);
    const revision = await first.currentRevision();
    await first.close();
    assert.equal(statSync(file).mode & 0o777, 0o600, 'only its owner reads a new store');

    const second = await openStorage(`sqlite:${file}`);
    assert.equal(await second.currentRevision(), revision);
    assert.equal(await second.compactedRevision(), r1 + 1);
    assert.deepEqual(await second.get('/a'), { key: '/a', value: bytes('2'), createRevision: r1, modRevision: r1 + 1, version: 2 });
    assert.deepEqual((await second.list('/', { revision: r1 + 2 })).items.map((kv) => kv.key), ['/a', '/b']);
    const seen = new EventCollector();
    await second.watch('/', { fromRevision: r1 + 2 }, seen.listener);
    await seen.waitFor(2);
    assert.deepEqual(seen.summary(), [`put /b@${r1 + 2}`, `delete /b@${r1 + 3}`]);
    assert.equal((await second.put('/c', bytes('c'))).revision, revision + 1);
    // The last write a deletion, and compacted away: the revision still survives a restart.
    const { revision: deleted } = await second.delete('/c');
    await second.compact(deleted);
    await second.close();
    const third = await openStorage(`sqlite:${file}`);
    assert.equal(await third.currentRevision(), deleted);
    assert.equal(await third.compactedRevision(), deleted);
    assert.equal((await third.put('/d', bytes('d'))).revision, deleted + 1);
    await third.close();
  });

  it('keeps every acknowledged write when the writing process is killed with SIGKILL', async () => {
    const file = path.join(dir, 'crash.db');
    const acknowledged: string[] = [];
    let enough!: () => void;
    const reached = new Promise<void>((resolve) => (enough = resolve));
    const child = await startWriter(file, 'write', (key) => {
      acknowledged.push(key);
      if (acknowledged.length === 300) enough();
    });
    await reached;
    await stop(child);
    assert.ok(acknowledged.length >= 300);

    const store = await openStorage(`sqlite:${file}`);
    const listed = await store.list('/crash/');
    const stored = new Map(listed.items.map((kv) => [kv.key, text(kv.value)]));
    for (const key of acknowledged) {
      assert.equal(stored.get(key), valueOf(Number(key.slice('/crash/'.length))), `acknowledged ${key} is there with its value`);
    }
    // One write may have committed without being acknowledged; none can be missing in between.
    assert.ok(stored.size - acknowledged.length <= 1, `${stored.size} stored, ${acknowledged.length} acknowledged`);
    assert.equal(await store.currentRevision(), 1 + stored.size);
    await store.close();
  });

  it('refuses a file another process holds, with one line', async () => {
    const file = path.join(dir, 'held.db');
    const child = await startWriter(file, 'hold');
    try {
      await openFails(`sqlite:${file}`, 'unavailable', `SQLite store ${file}: in use by another process`);
    } finally {
      await stop(child);
    }
    const store = await openStorage(`sqlite:${file}`);
    await store.close();
  });

  it('shares one file between the stores of one process, writes and watches alike', async () => {
    const file = path.join(dir, 'shared.db');
    const one = await openStorage(`sqlite:${file}`);
    const two = await openStorage(`sqlite:${path.relative('.', file)}`);
    const seen = new EventCollector();
    await two.watch('/s/', {}, seen.listener, seen.onError);
    const { revision } = await one.put('/s/a', bytes('from one'));
    await seen.waitFor(1);
    assert.deepEqual(seen.summary(), [`put /s/a@${revision}`]);
    assert.equal(text((await two.get('/s/a'))!.value), 'from one');
    await one.close();
    assert.equal(text((await two.get('/s/a'))!.value), 'from one', 'closing one store leaves the other open');
    assert.deepEqual(seen.errors, []);
    await two.close();
    assert.equal(seen.errors.length, 1);
  });

  it('refuses a file that is not a SQLite database, and leaves it untouched', async () => {
    const file = path.join(dir, 'garbage.db');
    const garbage = Buffer.from('this is not a database, but somebody\'s notes\n'.repeat(200));
    writeFileSync(file, garbage);
    await openFails(`sqlite:${file}`, 'corrupt', `SQLite store ${file}: not a SQLite database, or damaged (file is not a database)`);
    assert.deepEqual(readFileSync(file), garbage);
    assert.equal(existsSync(`${file}-wal`), false);
  });

  it('refuses a damaged store with one line, and leaves it untouched', async () => {
    const file = path.join(dir, 'damaged.db');
    const store = await openStorage(`sqlite:${file}`);
    for (let i = 0; i < 300; i++) await store.put(`/k/${i}`, bytes(`value ${i}`.repeat(20)));
    await store.close();
    const damaged = readFileSync(file);
    damaged.fill(0xab, 4096); // every page after the first: the schema survives, the tables do not
    writeFileSync(file, damaged);
    await openFails(`sqlite:${file}`, 'corrupt', `SQLite store ${file}: not a SQLite database, or damaged (database disk image is malformed)`);
    assert.deepEqual(readFileSync(file), damaged);
  });

  it('refuses a SQLite database of another program, and leaves it untouched', async () => {
    const file = path.join(dir, 'other.db');
    const other = new Database(file);
    other.exec("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('keep me')");
    other.close();
    const before = readFileSync(file);
    await openFails(`sqlite:${file}`, 'corrupt', `SQLite store ${file}: not a Portcullis store (a SQLite database with other contents)`);
    assert.deepEqual(readFileSync(file), before);
  });

  it('refuses a store written by a newer schema', async () => {
    const file = path.join(dir, 'newer.db');
    const store = SqliteStorage.open(file);
    await store.close();
    const db = new Database(file);
    db.pragma('user_version = 99');
    db.close();
    await openFails(`sqlite:${file}`, 'corrupt', `SQLite store ${file}: written by a newer Portcullis (schema 99; this version reads up to 1)`);
  });

  it('refuses a directory and an unwritable file', async () => {
    const directory = path.join(dir, 'a-directory');
    mkdirSync(directory);
    await openFails(`sqlite:${directory}`, 'unavailable', `SQLite store ${directory}: not a regular file`);
    if (process.getuid?.() === 0) return; // root reads and writes any file: nothing to refuse
    const file = path.join(dir, 'readonly.db');
    (await openStorage(`sqlite:${file}`)).close();
    chmodSync(file, 0o400);
    await openFails(`sqlite:${file}`, 'unavailable', `SQLite store ${file}: not readable and writable`);
  });
});
