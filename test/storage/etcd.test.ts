// The conformance suite on a real etcd (started here on loopback), plus what only etcd does:
// several processes' stores on one cluster, key prefixes, and an unreachable cluster.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CertificateAuthority } from '../../src/common/tls.js';
import { EtcdStorage } from '../../src/storage/etcd.js';
import { openStorage, StorageError, type Storage } from '../../src/storage/index.js';
import { etcdMissing, freePort, startEtcd, type EtcdServer } from './etcd-server.js';
import { EventCollector, storageSuite } from './suite.js';
import { transcript } from './differential.js';
import { MemoryStorage } from '../../src/storage/memory.js';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const text = (value: Uint8Array): string => new TextDecoder().decode(value);
const missing = etcdMissing();

if (missing) {
  console.log(`# etcd storage tests skipped: ${missing}`);
  it('etcd backend', { skip: missing }, () => {});
} else {
  let server: EtcdServer;
  let count = 0;
  before(async () => {
    server = await startEtcd();
  });
  after(async () => {
    await server?.stop();
  });

  storageSuite('etcd', () => EtcdStorage.open([server.endpoint], { prefix: `/suite-${++count}/` }));

  describe('etcd cluster', () => {
    const opened: Storage[] = [];
    after(async () => {
      for (const storage of opened) await storage.close();
    });
    const open = async (url: string): Promise<Storage> => {
      const storage = await openStorage(url);
      opened.push(storage);
      return storage;
    };

    it('lets two processes\' stores on one cluster see each other\'s writes, through watch too', async () => {
      const url = `etcd://${server.endpoint}?prefix=/scale-out/`;
      const apiServer1 = await open(url);
      const apiServer2 = await open(url);
      const seen1 = new EventCollector();
      const seen2 = new EventCollector();
      await apiServer1.watch('/pods/', {}, seen1.listener, seen1.onError);
      await apiServer2.watch('/pods/', {}, seen2.listener, seen2.onError);

      const { revision: created } = await apiServer1.put('/pods/a', bytes('from 1'), { expectedRevision: 0 });
      const { revision: updated } = await apiServer2.put('/pods/a', bytes('from 2'), { expectedRevision: created });
      await assert.rejects(apiServer1.put('/pods/a', bytes('stale'), { expectedRevision: created }), { name: 'ConflictError', actualRevision: updated });
      await seen1.waitFor(2);
      await seen2.waitFor(2);
      assert.deepEqual(seen1.summary(), [`put /pods/a@${created}`, `put /pods/a@${updated}`]);
      assert.deepEqual(seen2.summary(), seen1.summary());
      assert.equal(text(seen1.events[1]!.prevKv!.value), 'from 1');
      assert.equal(text((await apiServer1.get('/pods/a'))!.value), 'from 2');
    });

    it('keeps stores with different prefixes apart, and strips the prefix from keys', async () => {
      const cluster = await open(`etcd://${server.endpoint}?prefix=/cluster/`);
      const secrets = await open(`etcd://${server.endpoint}?prefix=/secrets/`);
      await cluster.put('/a', bytes('cluster'));
      await secrets.put('/a', bytes('secrets'));
      assert.deepEqual((await cluster.list('')).items.map((kv) => `${kv.key}=${text(kv.value)}`), ['/a=cluster']);
      assert.deepEqual((await secrets.list('')).items.map((kv) => `${kv.key}=${text(kv.value)}`), ['/a=secrets']);
    });

    it('resumes a watch across an etcd restart without losing the writes made meanwhile', async () => {
      const url = `etcd://${server.endpoint}?prefix=/restart/`;
      const watching = await EtcdStorage.open([server.endpoint], { prefix: '/restart/', connectTimeoutMs: 20_000 });
      opened.push(watching);
      const seen = new EventCollector();
      await watching.watch('/', {}, seen.listener, seen.onError);
      const { revision: before } = await (await open(url)).put('/before', bytes('1'));
      await seen.waitFor(1);

      await server.pause();
      await server.resume();
      const writer = await open(url); // a process that came up while the watcher was reconnecting
      const { revision: first } = await writer.put('/after/1', bytes('2'));
      const { revision: second } = await writer.delete('/before');
      await seen.waitFor(3);
      assert.deepEqual(seen.summary(), [`put /before@${before}`, `put /after/1@${first}`, `delete /before@${second}`]);
      assert.deepEqual(seen.errors, []);
    });

    it('ends a watch with UnavailableError when etcd stays away longer than the connect timeout', async () => {
      const watching = await EtcdStorage.open([server.endpoint], { prefix: '/gone/', connectTimeoutMs: 500 });
      opened.push(watching);
      const seen = new EventCollector();
      await watching.watch('/', {}, seen.listener, seen.onError);
      await server.pause();
      try {
        await seen.until(() => seen.errors.length > 0, 'the watch to end');
      } finally {
        await server.resume();
      }
      assert.equal(seen.errors.length, 1);
      assert.equal(seen.errors[0]!.code, 'unavailable');
      assert.match(seen.errors[0]!.message, new RegExp(`^etcd at ${server.endpoint}: watch lost \\(`));
    });

    it('agrees with the memory backend on a random script', async () => {
      const etcd = await EtcdStorage.open([server.endpoint], { prefix: '/differential/' });
      opened.push(etcd);
      assert.deepEqual(await transcript(etcd, 1), await transcript(new MemoryStorage(), 1));
    });

    it('talks TLS with a client certificate to an etcd that requires one', async () => {
      const ca = await CertificateAuthority.create('portcullis test etcd CA');
      const tls = {
        ca: ca.cert,
        server: await ca.issueServer({ commonName: 'etcd', hosts: ['127.0.0.1', 'localhost'] }),
        client: await ca.issueClient({ commonName: 'portcullis' }),
      };
      const secure = await startEtcd({ tls });
      const pki = mkdtempSync(path.join(tmpdir(), 'portcullis-etcd-client-'));
      try {
        for (const [name, pem] of Object.entries({ 'ca.crt': tls.ca, 'client.crt': tls.client.cert, 'client.key': tls.client.key })) {
          writeFileSync(path.join(pki, name), pem);
        }
        const files = `ca=${path.join(pki, 'ca.crt')}&cert=${path.join(pki, 'client.crt')}&key=${path.join(pki, 'client.key')}`;
        const store = await openStorage(`etcd://${secure.endpoint}?prefix=/tls/&${files}`);
        try {
          const seen = new EventCollector();
          await store.watch('/', {}, seen.listener, seen.onError);
          const { revision } = await store.put('/a', bytes('over TLS'));
          await seen.waitFor(1);
          assert.deepEqual(seen.summary(), [`put /a@${revision}`]);
          assert.equal(text((await store.get('/a'))!.value), 'over TLS');
        } finally {
          await store.close();
        }
        await assert.rejects(openStorage(`etcd://${secure.endpoint}?ca=${path.join(pki, 'ca.crt')}`, { connectTimeoutMs: 2000 }), (error: unknown) => {
          assert.ok(error instanceof StorageError);
          assert.equal(error.code, 'unavailable');
          assert.equal(error.message, `etcd at ${secure.endpoint}: unreachable (etcd refused the client certificate, or wants one: cert=FILE&key=FILE)`);
          return true;
        });
        writeFileSync(path.join(pki, 'other-ca.crt'), (await CertificateAuthority.create('another CA')).cert);
        await assert.rejects(openStorage(`etcd://${secure.endpoint}?ca=${path.join(pki, 'other-ca.crt')}`, { connectTimeoutMs: 2000 }), {
          message: `etcd at ${secure.endpoint}: unreachable (etcd's certificate is not signed by the CA in ca=FILE)`,
        });
      } finally {
        await secure.stop();
        rmSync(pki, { recursive: true, force: true });
      }
    });

    it('reports an unreachable cluster in one line naming the address', async () => {
      const port = await freePort();
      await assert.rejects(openStorage(`etcd://127.0.0.1:${port}`, { connectTimeoutMs: 2000 }), (error: unknown) => {
        assert.ok(error instanceof StorageError);
        assert.equal(error.code, 'unavailable');
        assert.equal(error.message, `etcd at 127.0.0.1:${port}: unreachable (connect ECONNREFUSED 127.0.0.1:${port})`);
        return true;
      });
    });
  });
}
