/**
 * The conformance suite of the Storage contract (src/storage/types.ts). Every backend runs it:
 * `storageSuite('memory', () => new MemoryStorage())`. The factory returns a fresh, empty store each
 * time (on etcd: a fresh prefix on a shared cluster, so revisions are compared relative to the start).
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import {
  CompactedError,
  ConflictError,
  FutureRevisionError,
  StorageError,
  UnavailableError,
  type KeyValue,
  type Storage,
  type StorageErrorCode,
  type WatchEvent,
} from '../../src/storage/types.js';

export type StorageFactory = () => Promise<Storage>;

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const text = (value: Uint8Array): string => new TextDecoder().decode(value);
const keysOf = (items: readonly KeyValue[]): string[] => items.map((kv) => kv.key);

async function rejectsWith(promise: Promise<unknown>, code: StorageErrorCode, message?: RegExp): Promise<StorageError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof StorageError, `expected a StorageError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    if (message) assert.match(error.message, message);
    return error;
  }
  assert.fail(`expected a ${code} error, but the call succeeded`);
}

/** Collects watch events and lets a test wait until some condition on them holds. */
export class EventCollector {
  readonly events: WatchEvent[] = [];
  readonly batches: (readonly WatchEvent[])[] = [];
  errors: StorageError[] = [];
  #waiters: (() => void)[] = [];

  readonly listener = (events: readonly WatchEvent[]): void => {
    this.batches.push(events);
    this.events.push(...events);
    this.#wake();
  };

  readonly onError = (error: StorageError): void => {
    this.errors.push(error);
    this.#wake();
  };

  /** Resolves once `count` events arrived; fails the test after 10 s with what did arrive. */
  async waitFor(count: number): Promise<WatchEvent[]> {
    await this.until(() => this.events.length >= count, `${count} events`);
    return this.events.slice(0, count);
  }

  async until(condition: () => boolean, what: string): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (!condition()) {
      if (Date.now() > deadline) {
        assert.fail(`timed out waiting for ${what}; got ${this.events.length} events ${JSON.stringify(this.summary())} and errors ${this.errors.map((e) => e.message).join('; ')}`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  summary(): string[] {
    return this.events.map((event) => `${event.type} ${event.kv.key}@${event.revision}`);
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}

export function storageSuite(name: string, open: StorageFactory): void {
  describe(`Storage contract: ${name}`, () => {
    const opened: Storage[] = [];
    const fresh = async (): Promise<Storage> => {
      const storage = await open();
      opened.push(storage);
      return storage;
    };
    afterEach(async () => {
      for (const storage of opened.splice(0)) await storage.close();
    });

    it('starts empty', async () => {
      const store = await fresh();
      assert.equal(await store.get('nothing'), undefined);
      const revision = await store.currentRevision();
      assert.ok(revision >= 1, `an empty store is at revision 1 or later, not ${revision}`);
      assert.deepEqual(await store.list(''), { items: [], revision });
      assert.equal(await store.compactedRevision(), 0);
    });

    it('advances the revision by one per write and tracks create/mod revision and version', async () => {
      const store = await fresh();
      const start = await store.currentRevision();

      const first = await store.put('a', bytes('1'));
      assert.deepEqual(first, { revision: start + 1 });
      const second = await store.put('a', bytes('2'));
      assert.equal(second.revision, start + 2);
      assert.deepEqual(second.prev, { key: 'a', value: bytes('1'), createRevision: start + 1, modRevision: start + 1, version: 1 });
      assert.deepEqual(await store.get('a'), { key: 'a', value: bytes('2'), createRevision: start + 1, modRevision: start + 2, version: 2 });

      const removed = await store.delete('a');
      assert.equal(removed.revision, start + 3);
      assert.deepEqual(removed.prev, { key: 'a', value: bytes('2'), createRevision: start + 1, modRevision: start + 2, version: 2 });
      assert.equal(await store.get('a'), undefined);

      // Deleting what is absent writes nothing: the revision stays.
      assert.deepEqual(await store.delete('a'), { revision: start + 3 });
      assert.equal(await store.currentRevision(), start + 3);

      // A key created again starts a new life.
      await store.put('a', bytes('3'));
      assert.deepEqual(await store.get('a'), { key: 'a', value: bytes('3'), createRevision: start + 4, modRevision: start + 4, version: 1 });

      const txn = await store.txn({ operations: [{ type: 'put', key: 'b', value: bytes('b') }, { type: 'put', key: 'c', value: bytes('c') }, { type: 'delete', key: 'a' }] });
      assert.equal(txn.revision, start + 5);
      assert.equal(await store.currentRevision(), start + 5);
      assert.equal((await store.get('b'))?.modRevision, start + 5);
      assert.equal((await store.get('c'))?.modRevision, start + 5);
    });

    it('compares and swaps on put with expectedRevision (0: must not exist)', async () => {
      const store = await fresh();
      const created = await store.put('k', bytes('v1'), { expectedRevision: 0 });
      const conflict = await rejectsWith(store.put('k', bytes('again'), { expectedRevision: 0 }), 'conflict');
      assert.ok(conflict instanceof ConflictError);
      assert.equal(conflict.key, 'k');
      assert.equal(conflict.actualRevision, created.revision);
      assert.equal(conflict.expectedRevision, 0);
      assert.equal(conflict.message, `conflict on "k": expected revision 0, found ${created.revision}`);

      const stale = await rejectsWith(store.put('k', bytes('v2'), { expectedRevision: created.revision + 7 }), 'conflict');
      assert.equal((stale as ConflictError).actualRevision, created.revision);
      assert.equal(await store.currentRevision(), created.revision, 'a failed compare-and-swap writes nothing');
      assert.equal(text((await store.get('k'))!.value), 'v1');

      const updated = await store.put('k', bytes('v2'), { expectedRevision: created.revision });
      assert.equal(updated.revision, created.revision + 1);

      const missing = await rejectsWith(store.put('absent', bytes('x'), { expectedRevision: 3 }), 'conflict');
      assert.equal((missing as ConflictError).actualRevision, 0);
    });

    it('compares and swaps on delete with expectedRevision', async () => {
      const store = await fresh();
      const { revision } = await store.put('k', bytes('v'));
      const conflict = await rejectsWith(store.delete('k', { expectedRevision: revision - 1 }), 'conflict');
      assert.equal((conflict as ConflictError).actualRevision, revision);
      assert.ok(await store.get('k'), 'a failed conditional delete keeps the key');
      await rejectsWith(store.delete('k', { expectedRevision: 0 }), 'conflict');

      const removed = await store.delete('k', { expectedRevision: revision });
      assert.equal(removed.revision, revision + 1);
      assert.equal(removed.prev?.modRevision, revision);
      assert.equal(await store.get('k'), undefined);
      assert.deepEqual(await store.delete('k', { expectedRevision: 0 }), { revision: revision + 1 });
      await rejectsWith(store.delete('k', { expectedRevision: revision }), 'conflict');
    });

    it('lists a prefix in UTF-8 byte order of the keys, with unicode and slashes', async () => {
      const store = await fresh();
      const keys = ['/r/b', '/r/a/x', '/r/a', '/r/é', '/r/z', '/r/\u{1F600}', '/r/\uFFFD', '/r/A', '/r/ a', '/r/日本'];
      for (const key of keys) await store.put(key, bytes(key));
      await store.put('/r', bytes('the prefix without its slash'));
      await store.put('/q/a', bytes('before'));
      await store.put('/s/a', bytes('after'));
      await store.put('/r0', bytes('sibling'));

      const { items } = await store.list('/r/');
      const expected = [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
      assert.deepEqual(keysOf(items), expected);
      // The byte order puts U+FFFD before an emoji; UTF-16 code unit order would not.
      assert.ok(expected.indexOf('/r/\uFFFD') < expected.indexOf('/r/\u{1F600}'));
      for (const item of items) assert.equal(text(item.value), item.key);
      assert.deepEqual(keysOf((await store.list('/r/a')).items), ['/r/a', '/r/a/x']);
      assert.equal((await store.list('')).items.length, keys.length + 4);
      assert.equal(text((await store.get('/r/\u{1F600}'))!.value), '/r/\u{1F600}');
    });

    it('pages with limit and continue, consistent at the first page\'s revision while writes happen', async () => {
      const store = await fresh();
      for (let i = 0; i < 10; i++) await store.put(`/p/${i}`, bytes(`v${i}`));
      const first = await store.list('/p/', { limit: 4 });
      assert.deepEqual(keysOf(first.items), ['/p/0', '/p/1', '/p/2', '/p/3']);
      assert.equal(first.remaining, 6);
      assert.equal(typeof first.continue, 'string');

      // Between pages: a delete, an update, and a creation inside the range still to come.
      await store.delete('/p/5');
      await store.put('/p/6', bytes('changed'));
      await store.put('/p/45', bytes('new'));
      await store.delete('/p/2');

      const second = await store.list('/p/', { limit: 4, continue: first.continue });
      assert.equal(second.revision, first.revision);
      assert.deepEqual(keysOf(second.items), ['/p/4', '/p/5', '/p/6', '/p/7']);
      assert.equal(text(second.items[2]!.value), 'v6');
      assert.equal(second.remaining, 2);
      const third = await store.list('/p/', { limit: 4, continue: second.continue });
      assert.deepEqual(keysOf(third.items), ['/p/8', '/p/9']);
      assert.equal(third.continue, undefined);
      assert.equal(third.remaining, undefined);

      const now = await store.list('/p/');
      assert.deepEqual(keysOf(now.items), ['/p/0', '/p/1', '/p/3', '/p/4', '/p/45', '/p/6', '/p/7', '/p/8', '/p/9']);
      assert.equal(now.revision, first.revision + 4);
      assert.equal((await store.list('/p/', { limit: 9 })).continue, undefined, 'an exact last page has no continue');
    });

    it('lists at an older revision, and refuses a future one or a foreign token', async () => {
      const store = await fresh();
      const { revision: r1 } = await store.put('/o/a', bytes('1'));
      await store.put('/o/b', bytes('1'));
      await store.put('/o/a', bytes('2'));
      await store.delete('/o/b');
      const old = await store.list('/o/', { revision: r1 + 1 });
      assert.equal(old.revision, r1 + 1);
      assert.deepEqual(old.items.map((kv) => `${kv.key}=${text(kv.value)}`), ['/o/a=1', '/o/b=1']);
      assert.deepEqual(keysOf((await store.list('/o/', { revision: r1 })).items), ['/o/a']);
      assert.deepEqual((await store.list('/o/')).items.map((kv) => `${kv.key}=${text(kv.value)}`), ['/o/a=2']);

      const future = await rejectsWith(store.list('/o/', { revision: r1 + 100 }), 'invalid');
      assert.ok(future instanceof FutureRevisionError);
      assert.equal(future.requestedRevision, r1 + 100);
      assert.equal(future.currentRevision, r1 + 3);
      assert.equal(future.message, `revision ${r1 + 100} is in the future: the current revision is ${r1 + 3}`);
      await rejectsWith(store.list('/o/', { continue: 'garbage' }), 'invalid', /continue token/);
      const page = await store.list('/o/', { limit: 1, revision: r1 + 1 });
      await rejectsWith(store.list('/other/', { continue: page.continue }), 'invalid', /another prefix/);
      await rejectsWith(store.list('/o/', { limit: -1 }), 'invalid', /limit/);
    });

    it('applies a transaction all or nothing', async () => {
      const store = await fresh();
      const { revision } = await store.put('/t/a', bytes('a'));
      const before = await store.currentRevision();
      const conflict = await rejectsWith(
        store.txn({
          compare: [{ key: '/t/a', modRevision: revision }, { key: '/t/b', modRevision: 5 }],
          operations: [{ type: 'put', key: '/t/c', value: bytes('c') }, { type: 'delete', key: '/t/a' }],
        }),
        'conflict',
      );
      assert.equal((conflict as ConflictError).key, '/t/b');
      assert.equal((conflict as ConflictError).actualRevision, 0);
      assert.equal(await store.currentRevision(), before);
      assert.equal(await store.get('/t/c'), undefined);
      assert.ok(await store.get('/t/a'));

      const done = await store.txn({
        compare: [{ key: '/t/a', modRevision: revision }, { key: '/t/b', modRevision: 0 }],
        operations: [{ type: 'put', key: '/t/b', value: bytes('b') }, { type: 'delete', key: '/t/a' }],
      });
      assert.equal(done.revision, before + 1);
      assert.deepEqual(keysOf((await store.list('/t/')).items), ['/t/b']);

      await rejectsWith(store.txn({ operations: [{ type: 'put', key: '/t/x', value: bytes('1') }, { type: 'delete', key: '/t/x' }] }), 'invalid', /more than once/);
      assert.deepEqual(await store.txn({ operations: [{ type: 'delete', key: '/t/none' }] }), { revision: before + 1 });
    });

    it('watches every later put and delete in order, with prevKv and tombstones', async () => {
      const store = await fresh();
      await store.put('/w/a', bytes('old'));
      await store.put('/x/outside', bytes('x'));
      const seen = new EventCollector();
      const watcher = await store.watch('/w/', {}, seen.listener, seen.onError);
      const { revision: r1 } = await store.put('/w/a', bytes('new'));
      await store.put('/x/outside', bytes('y'));
      const { revision: r2 } = await store.put('/w/b', bytes('b'));
      const { revision: r3 } = await store.delete('/w/a');
      const { revision: r4 } = await store.txn({ operations: [{ type: 'put', key: '/w/c', value: bytes('c') }, { type: 'delete', key: '/w/b' }] });

      const events = await seen.waitFor(5);
      assert.deepEqual(seen.summary(), [`put /w/a@${r1}`, `put /w/b@${r2}`, `delete /w/a@${r3}`, `put /w/c@${r4}`, `delete /w/b@${r4}`]);
      assert.equal(text(events[0]!.kv.value), 'new');
      assert.equal(text(events[0]!.prevKv!.value), 'old');
      assert.equal(events[1]!.prevKv, undefined);
      assert.deepEqual(events[2]!.kv, { key: '/w/a', value: new Uint8Array(0), createRevision: 0, modRevision: r3, version: 0 });
      assert.deepEqual(events[2]!.prevKv, { key: '/w/a', value: bytes('new'), createRevision: r1 - 2, modRevision: r1, version: 2 });
      assert.equal(text(events[4]!.prevKv!.value), 'b');
      assert.ok(
        seen.batches.some((batch) => batch.length === 2 && batch[0]!.revision === r4 && batch[1]!.revision === r4),
        'the events of one transaction arrive in one call',
      );

      watcher.close();
      watcher.close();
      await store.put('/w/after-close', bytes('x'));
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(seen.events.length, 5, 'no event after close()');
      assert.deepEqual(seen.errors, []);
    });

    it('watches from a past revision: the history, then live events, without gaps', async () => {
      const store = await fresh();
      const { revision: from } = await store.put('/h/1', bytes('1'));
      await store.put('/h/2', bytes('2'));
      await store.delete('/h/1');
      const seen = new EventCollector();
      await store.watch('/h/', { fromRevision: from + 1 }, seen.listener, seen.onError);
      await store.put('/h/3', bytes('3'));
      await seen.waitFor(3);
      assert.deepEqual(seen.summary(), [`put /h/2@${from + 1}`, `delete /h/1@${from + 2}`, `put /h/3@${from + 3}`]);
      assert.equal(text(seen.events[1]!.prevKv!.value), '1');

      const all = new EventCollector();
      await store.watch('/h/', { fromRevision: from }, all.listener);
      await all.waitFor(4);
      assert.deepEqual(all.summary().slice(0, 1), [`put /h/1@${from}`]);
    });

    it('watches the whole store with the empty prefix, and from a revision still to come', async () => {
      const store = await fresh();
      const start = await store.currentRevision();
      const everything = new EventCollector();
      const later = new EventCollector();
      await store.watch('', {}, everything.listener, everything.onError);
      await store.watch('', { fromRevision: start + 3 }, later.listener, later.onError);
      let writing = true;
      const calledDuringWrite = new EventCollector();
      await store.watch('/a', {}, (events) => {
        if (writing) assert.fail('a listener was called inside the write');
        calledDuringWrite.listener(events);
      });
      const write = store.put('/a', bytes('1'));
      writing = false;
      await write;
      await store.put('/b', bytes('2'));
      await store.put('/c/d', bytes('3'));
      await store.delete('/a');
      await everything.waitFor(4);
      await later.waitFor(2);
      await calledDuringWrite.waitFor(2);
      assert.deepEqual(everything.summary(), [`put /a@${start + 1}`, `put /b@${start + 2}`, `put /c/d@${start + 3}`, `delete /a@${start + 4}`]);
      assert.deepEqual(later.summary(), [`put /c/d@${start + 3}`, `delete /a@${start + 4}`]);
    });

    it('delivers every revision exactly once, in order, with many concurrent writers', async () => {
      const store = await fresh();
      const start = await store.currentRevision();
      const seen = new EventCollector();
      await store.watch('/m/', { fromRevision: start + 1 }, seen.listener, seen.onError);
      const writers = 6;
      const writes = 25;
      await Promise.all(
        Array.from({ length: writers }, async (_, w) => {
          for (let i = 0; i < writes; i++) {
            if (i % 5 === 4) await store.delete(`/m/${w}/${i - 1}`);
            else await store.put(`/m/${w}/${i}`, bytes(`${w}:${i}`));
          }
        }),
      );
      const total = writers * writes;
      await seen.waitFor(total);
      const revisions = seen.events.map((event) => event.revision);
      assert.deepEqual(revisions, Array.from({ length: total }, (_, i) => start + 1 + i));
      const late = new EventCollector();
      await store.watch('/m/', { fromRevision: start + 1 }, late.listener);
      await late.waitFor(total);
      assert.deepEqual(late.summary(), seen.summary(), 'a watch from the past sees the same history');
    });

    it('fails reads and watches before the compaction point with CompactedError', async () => {
      const store = await fresh();
      const { revision: r1 } = await store.put('/c/a', bytes('1'));
      await store.put('/c/a', bytes('2'));
      const { revision: r3 } = await store.put('/c/b', bytes('1'));
      await store.delete('/c/b');
      const { revision: r5 } = await store.put('/c/c', bytes('1'));
      await store.compact(r3);
      assert.equal(await store.compactedRevision(), r3);

      const list = await rejectsWith(store.list('/c/', { revision: r1 }), 'compacted');
      assert.ok(list instanceof CompactedError);
      assert.equal(list.requestedRevision, r1);
      assert.equal(list.compactRevision, r3);
      assert.match(list.message, new RegExp(`revision ${r1} is no longer available: history was compacted at revision ${r3}`));
      const atCompaction = await store.list('/c/', { revision: r3 });
      assert.deepEqual(atCompaction.items.map((kv) => `${kv.key}=${text(kv.value)}`), ['/c/a=2', '/c/b=1']);

      const watch = await rejectsWith(store.watch('/c/', { fromRevision: r3 }, () => {}), 'compacted');
      assert.equal((watch as CompactedError).requestedRevision, r3);
      assert.equal((watch as CompactedError).compactRevision, r3);
      await rejectsWith(store.watch('/c/', { fromRevision: 1 }, () => {}), 'compacted');
      const seen = new EventCollector();
      await store.watch('/c/', { fromRevision: r3 + 1 }, seen.listener, seen.onError);
      await seen.waitFor(2);
      assert.deepEqual(seen.summary(), [`delete /c/b@${r3 + 1}`, `put /c/c@${r5}`]);
      assert.equal(text(seen.events[0]!.prevKv!.value), '1', 'the delete after the compaction point keeps its prevKv');

      // A page begun before the compaction cannot continue after it.
      const page = await store.list('/c/', { limit: 1 });
      await store.put('/c/d', bytes('1'));
      await store.compact(await store.currentRevision());
      await rejectsWith(store.list('/c/', { continue: page.continue }), 'compacted');
      await store.compact(r3);
      assert.equal(await store.compactedRevision(), await store.currentRevision(), 'compacting below the point does nothing');
      assert.deepEqual(keysOf((await store.list('/c/')).items), ['/c/a', '/c/c', '/c/d']);
      await rejectsWith(store.compact((await store.currentRevision()) + 10), 'invalid');
    });

    it('stores values as bytes, binary-safe, and hands out its own copies', async () => {
      const store = await fresh();
      const all = Uint8Array.from({ length: 256 }, (_, i) => i);
      await store.put('/b/all', all);
      await store.put('/b/empty', new Uint8Array(0));
      const zeros = new Uint8Array(1000);
      await store.put('/b/zeros', zeros);
      assert.deepEqual((await store.get('/b/all'))!.value, all);
      assert.deepEqual((await store.get('/b/empty'))!.value, new Uint8Array(0));
      assert.deepEqual((await store.get('/b/zeros'))!.value, zeros);

      all[0] = 99;
      const stored = (await store.get('/b/all'))!;
      assert.equal(stored.value[0], 0, 'changing the caller\'s array after put changes nothing stored');
      stored.value[1] = 99;
      assert.equal((await store.get('/b/all'))!.value[1], 1, 'changing a returned value changes nothing stored');
      const listed = await store.list('/b/');
      assert.deepEqual(listed.items.map((kv) => kv.value.length), [256, 0, 1000]);
    });

    it('refuses bad arguments with an invalid error and writes nothing', async () => {
      const store = await fresh();
      const before = await store.currentRevision();
      await rejectsWith(store.put('', bytes('x')), 'invalid', /non-empty string/);
      await rejectsWith(store.put('k', 'text' as unknown as Uint8Array), 'invalid', /Uint8Array/);
      await rejectsWith(store.put('bad\uD800', bytes('x')), 'invalid', /well-formed/);
      await rejectsWith(store.put('k', bytes('x'), { expectedRevision: -1 }), 'invalid', /expectedRevision/);
      await rejectsWith(store.get(42 as unknown as string), 'invalid');
      await rejectsWith(store.watch('/', { fromRevision: 0 }, () => {}), 'invalid', /fromRevision/);
      await rejectsWith(store.compact(0), 'invalid');
      assert.equal(await store.currentRevision(), before);
    });

    it('reports UnavailableError after close, and ends its watches with it', async () => {
      const store = await open();
      await store.put('/z/a', bytes('1'));
      const seen = new EventCollector();
      await store.watch('/z/', {}, seen.listener, seen.onError);
      await store.close();
      await seen.until(() => seen.errors.length === 1, 'the watch to end');
      assert.ok(seen.errors[0] instanceof UnavailableError);
      await rejectsWith(store.get('/z/a'), 'unavailable');
      await rejectsWith(store.put('/z/a', bytes('2')), 'unavailable');
      await rejectsWith(store.list('/z/'), 'unavailable');
      await rejectsWith(store.watch('/z/', {}, () => {}), 'unavailable');
      await store.close();
    });
  });
}
