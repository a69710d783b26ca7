// The same random script on memory and SQLite gives the same transcript (etcd: in etcd.test.ts).
import { it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MemoryStorage } from '../../src/storage/memory.js';
import { SqliteStorage } from '../../src/storage/sqlite.js';
import { transcript } from './differential.js';

const dir = mkdtempSync(path.join(tmpdir(), 'portcullis-differential-'));
after(() => rmSync(dir, { recursive: true, force: true }));

for (const seed of [1, 2, 3]) {
  it(`memory and SQLite agree on random script ${seed}`, async () => {
    const memory = new MemoryStorage();
    const sqlite = SqliteStorage.open(path.join(dir, `seed-${seed}.db`));
    try {
      const expected = await transcript(memory, seed);
      assert.ok(expected.some((line) => line.includes('→ conflict')), 'the script exercises conflicts');
      assert.ok(expected.some((line) => line.includes('compacted ')), 'the script exercises compaction');
      assert.deepEqual(await transcript(sqlite, seed), expected);
    } finally {
      await memory.close();
      await sqlite.close();
    }
  });
}
