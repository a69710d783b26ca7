// openStorage: the storage URL a user writes, and the one-line errors when it is wrong.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openStorage, parseStorageUrl, MemoryStorage, StorageError } from '../../src/storage/index.js';

describe('storage URLs', () => {
  it('parses the three backends', () => {
    assert.deepEqual(parseStorageUrl('memory:'), { kind: 'memory' });
    assert.deepEqual(parseStorageUrl('sqlite:.portcullis/cluster.db'), { kind: 'sqlite', path: '.portcullis/cluster.db' });
    assert.deepEqual(parseStorageUrl('sqlite:///var/lib/p.db'), { kind: 'sqlite', path: '/var/lib/p.db' });
    assert.deepEqual(parseStorageUrl('etcd://127.0.0.1:2379'), { kind: 'etcd', endpoints: ['127.0.0.1:2379'], prefix: '/portcullis/' });
    assert.deepEqual(parseStorageUrl('etcd://a.example:2379,[::1]:22379/?prefix=/secrets/'), {
      kind: 'etcd',
      endpoints: ['a.example:2379', '[::1]:22379'],
      prefix: '/secrets/',
    });
    assert.deepEqual(parseStorageUrl(`etcd://h:1?prefix=${encodeURIComponent('/registry')}`), { kind: 'etcd', endpoints: ['h:1'], prefix: '/registry/' });
    assert.deepEqual(parseStorageUrl('etcd://h:1?ca=/pki/ca.crt&cert=/pki/client.crt&key=/pki/client.key'), {
      kind: 'etcd',
      endpoints: ['h:1'],
      prefix: '/portcullis/',
      tls: { ca: '/pki/ca.crt', cert: '/pki/client.crt', key: '/pki/client.key' },
    });
  });

  for (const [url, message] of [
    ['postgres://x', 'storage URL "postgres://x": want memory:, sqlite:PATH or etcd://HOST:PORT[,HOST:PORT][?prefix=P]'],
    ['just-a-path.db', 'storage URL "just-a-path.db": want memory:, sqlite:PATH or etcd://HOST:PORT[,HOST:PORT][?prefix=P]'],
    ['sqlite:', 'storage URL sqlite:: want sqlite:PATH, the path of the database file'],
    ['memory:/x', 'storage URL memory:/x: memory: takes no path'],
    ['etcd://localhost', 'storage URL etcd://localhost: "localhost" is not HOST:PORT'],
    ['etcd://h:1,h:99999', 'storage URL etcd://h:1,h:99999: "h:99999" is not HOST:PORT'],
    ['etcd://h:1?prefx=/a/', 'storage URL etcd://h:1?prefx=/a/: unknown parameter "prefx" (known: prefix, ca, cert, key)'],
    ['etcd://h:1?ca=/c&cert=/a', 'storage URL etcd://h:1?ca=/c&cert=/a: cert and key go together'],
    ['etcd://h:1?cert=/a&key=/b', 'storage URL etcd://h:1?cert=/a&key=/b: a client certificate needs ca=FILE (TLS)'],
    ['etcd://h:1?ca=/nonexistent/ca.crt', 'storage URL etcd://h:1?ca=/nonexistent/ca.crt: /nonexistent/ca.crt: cannot read (ENOENT)'],
    ['etcd://h:1?prefix=', 'storage URL etcd://h:1?prefix=: the prefix must not be empty'],
  ] as const) {
    it(`refuses ${url} with one line`, async () => {
      await assert.rejects(openStorage(url), (error: unknown) => {
        assert.ok(error instanceof StorageError);
        assert.equal(error.code, 'invalid');
        assert.equal(error.message, message);
        return true;
      });
    });
  }

  it('opens memory:', async () => {
    const storage = await openStorage('memory:');
    assert.ok(storage instanceof MemoryStorage);
    await storage.close();
  });
});
