/**
 * A differential check of the backends: one seeded random script of puts, deletes, conditional
 * writes, transactions, paged lists at current and past revisions and compactions, run against a
 * store while a watch records everything. The transcript (revisions relative to the store's start,
 * results, error codes, the watched events) must be the same on every backend.
 */
import assert from 'node:assert/strict';
import { StorageError, type KeyValue, type Storage, type WatchEvent } from '../../src/storage/types.js';

/** A small, seeded generator (mulberry32): the same script on every backend and every run. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const KEYS = ['/d/a', '/d/b', '/d/c', '/d/sub/x', '/d/sub/y', '/d/é', '/d/\u{1F600}', '/d/\uFFFD', '/e/outside'];

export async function transcript(store: Storage, seed: number, steps = 250): Promise<string[]> {
  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const base = (await store.currentRevision()) - 1;
  const rel = (revision: number): number => (revision === 0 ? 0 : revision - base);
  const kv = (item: KeyValue | undefined): string =>
    item ? `${item.key}=${Buffer.from(item.value).toString('hex')}@${rel(item.createRevision)}/${rel(item.modRevision)}/v${item.version}` : '-';
  const out: string[] = [];
  const record = async (label: string, work: () => Promise<string>): Promise<void> => {
    try {
      out.push(`${label} → ${await work()}`);
    } catch (error) {
      if (!(error instanceof StorageError)) throw error;
      out.push(`${label} → ${error.code}${'actualRevision' in error ? ` actual ${rel(error.actualRevision as number)}` : ''}`);
    }
  };

  const events: WatchEvent[] = [];
  const watcher = await store.watch('/d/', { fromRevision: base + 2 }, (batch) => events.push(...batch));
  const value = (): Uint8Array => Uint8Array.from({ length: Math.floor(next() * 4) }, () => Math.floor(next() * 256));
  /** An expected revision that is right, absent (0) or stale, chosen at random. */
  const expectation = async (key: string): Promise<number> => {
    const choice = next();
    if (choice < 0.5) return (await store.get(key))?.modRevision ?? 0;
    if (choice < 0.75) return 0;
    return base + 1 + Math.floor(next() * 5);
  };

  for (let step = 0; step < steps; step++) {
    const roll = next();
    const key = pick(KEYS);
    if (roll < 0.3) {
      const bytes = value();
      await record(`put ${key}`, async () => {
        const result = await store.put(key, bytes);
        return `${rel(result.revision)} prev ${kv(result.prev)}`;
      });
    } else if (roll < 0.42) {
      const expected = await expectation(key);
      const bytes = value();
      await record(`put ${key} if ${rel(expected)}`, async () => `${rel((await store.put(key, bytes, { expectedRevision: expected })).revision)}`);
    } else if (roll < 0.55) {
      await record(`delete ${key}`, async () => {
        const result = await store.delete(key);
        return `${rel(result.revision)} prev ${kv(result.prev)}`;
      });
    } else if (roll < 0.62) {
      const expected = await expectation(key);
      await record(`delete ${key} if ${rel(expected)}`, async () => `${rel((await store.delete(key, { expectedRevision: expected })).revision)}`);
    } else if (roll < 0.72) {
      const keys = [...new Set([pick(KEYS), pick(KEYS), pick(KEYS)])];
      const compare = await Promise.all(keys.slice(0, 1 + Math.floor(next() * 2)).map(async (k) => ({ key: k, modRevision: await expectation(k) })));
      const operations = keys.map((k) => (next() < 0.7 ? { type: 'put' as const, key: k, value: value() } : { type: 'delete' as const, key: k }));
      const label = `txn if ${compare.map((c) => `${c.key}@${rel(c.modRevision)}`).join(',')} do ${operations.map((o) => `${o.type} ${o.key}`).join(',')}`;
      await record(label, async () => `${rel((await store.txn({ compare, operations })).revision)}`);
    } else if (roll < 0.97) {
      const prefix = pick(['/d/', '/d/sub/', '', '/e/', '/nothing/']);
      const limit = Math.floor(next() * 4);
      const current = await store.currentRevision();
      const compacted = await store.compactedRevision();
      const oldest = Math.max(compacted, base + 1);
      const revision = next() < 0.5 ? undefined : oldest + Math.floor(next() * (current - oldest + 1));
      await record(`list ${prefix} limit ${limit} at ${revision === undefined ? 'now' : rel(revision)}`, async () => {
        const pages: string[] = [];
        let page = await store.list(prefix, { limit, revision });
        pages.push(`${rel(page.revision)}: ${page.items.map(kv).join(' ')} (${page.remaining ?? 'end'})`);
        while (page.continue) {
          if (next() < 0.5) await store.put('/e/between-pages', value());
          page = await store.list(prefix, { limit, continue: page.continue });
          pages.push(`${page.items.map(kv).join(' ')} (${page.remaining ?? 'end'})`);
        }
        return pages.join(' | ');
      });
    } else {
      const current = await store.currentRevision();
      const at = base + 1 + Math.floor(next() * (current - base));
      await record(`compact ${rel(at)}`, async () => {
        await store.compact(at);
        const compacted = await store.compactedRevision();
        return compacted <= base ? 'compacted before this script' : `compacted ${rel(compacted)}`;
      });
    }
  }

  const { revision: last } = await store.put('/d/zz-end', new Uint8Array([1]));
  const deadline = Date.now() + 10_000;
  while (events.at(-1)?.revision !== last) {
    assert.ok(Date.now() < deadline, `the watch delivered ${events.length} events, none at revision ${last}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  watcher.close();
  for (const event of events) out.push(`event ${event.type} ${rel(event.revision)} ${kv(event.type === 'put' ? event.kv : undefined)} prev ${kv(event.prevKv)}`);
  return out;
}
