import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import { SqliteStorage } from '../../src/storage/sqlite.js';
import { storageSuite } from './suite.js';

const dir = mkdtempSync(path.join(tmpdir(), 'portcullis-sqlite-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let count = 0;

storageSuite('sqlite', async () => SqliteStorage.open(path.join(dir, `store-${++count}.db`)));
