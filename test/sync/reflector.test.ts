// The reflector's contract at the protocol level, against a Kubernetes API double that can lose a
// watch: list, watch from the list's version, resume after a watch ends, and list again (handing the
// handler the whole state) after 410 Expired — so nothing that changed in between is missed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { silentLogger } from '../../src/common/log.js';
import { KubeClient, type KubeObject } from '../../src/sync/kube.js';
import { Reflector } from '../../src/sync/reflector.js';

const pod = (name: string, rv: number): KubeObject => ({ metadata: { name, namespace: 'default', resourceVersion: String(rv) } });

/** A scripted API: `lists` answers successive list calls, `watches` successive watch calls (events, then end). */
function apiDouble(lists: Array<{ rv: number; items: KubeObject[] }>, watches: Array<Array<object>>) {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    res.setHeader('content-type', 'application/json');
    if (url.searchParams.get('watch') === '1') {
      seen.push(`watch rv=${url.searchParams.get('resourceVersion')} timeout=${url.searchParams.get('timeoutSeconds')}`);
      const events = watches.shift();
      if (!events) return; // hang: the test stops the reflector
      for (const event of events) res.write(JSON.stringify(event) + '\n');
      res.end();
      return;
    }
    const page = lists.shift()!;
    seen.push(`list -> rv=${page.rv}`);
    res.end(JSON.stringify({ apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: String(page.rv) }, items: page.items }));
  });
  return { server, seen };
}

test('a lost watch resumes from the last version; 410 Expired lists again and replaces the whole state', async () => {
  const { server, seen } = apiDouble(
    [
      { rv: 10, items: [pod('a', 5), pod('b', 6)] },
      { rv: 40, items: [pod('b', 6), pod('c', 35)] }, // while disconnected: a deleted, c created
    ],
    [
      [{ type: 'ADDED', object: pod('x', 11) }], // then the server ends the watch (timeout)
      [{ type: 'DELETED', object: pod('x', 12) }, { type: 'BOOKMARK', object: { metadata: { resourceVersion: '20' } } }],
      [{ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 410, reason: 'Expired', message: 'too old resource version: 20 (30)' } }],
    ],
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = new KubeClient({ server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, insecureSkipTlsVerify: false });
  const calls: string[] = [];
  const state = new Map<string, string>();
  let replaced!: () => void;
  const secondList = new Promise<void>((r) => (replaced = r));
  let lists = 0;
  const reflector = new Reflector(
    client,
    '/api/v1/pods',
    {
      async replace(objects) {
        calls.push(`replace ${objects.map((o) => o.metadata.name).join(',')}`);
        state.clear();
        for (const o of objects) state.set(o.metadata.name, o.metadata.resourceVersion!);
        if (++lists === 2) replaced();
      },
      async upsert(o) {
        calls.push(`upsert ${o.metadata.name}`);
        state.set(o.metadata.name, o.metadata.resourceVersion!);
      },
      async remove(o) {
        calls.push(`remove ${o.metadata.name}`);
        state.delete(o.metadata.name);
      },
    },
    silentLogger(),
    () => 7,
  );
  try {
    reflector.start();
    await reflector.initialSync;
    await secondList;
    await reflector.idle();
    assert.deepEqual(calls, ['replace a,b', 'upsert x', 'remove x', 'replace b,c']);
    assert.deepEqual([...state.keys()].sort(), ['b', 'c']);
    assert.deepEqual(seen.slice(0, 5), ['list -> rv=10', 'watch rv=10 timeout=7', 'watch rv=11 timeout=7', 'watch rv=20 timeout=7', 'list -> rv=40']);
    // Items of a list carry the list's apiVersion and kind, as kube-mgmt's replicated objects do.
  } finally {
    reflector.stop();
    client.close();
    server.closeAllConnections();
    server.close();
  }
});
