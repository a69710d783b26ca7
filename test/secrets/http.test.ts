// HTTP conventions and bad input: LIST on the same port (keep-alive, chunked bodies), ?list=true,
// tokens in three headers, 204s, Vault error bodies, and nothing stored changes on a bad request.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { devServer, http, ROOT } from './helpers.js';
import type { SecretsService } from '../../src/secrets/server.js';

let server: SecretsService;
before(async () => {
  server = await devServer();
  await http(server.url, 'POST', 'secret/data/list/a', { token: ROOT, body: { data: { v: 1 } } });
  await http(server.url, 'POST', 'secret/data/list/sub/b', { token: ROOT, body: { data: { v: 2 } } });
});
after(async () => {
  await server.close();
});

/** Raw HTTP/1.1 over one socket: several requests, then the raw response bytes. */
function rawExchange(port: number, payload: string, expectResponses: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk;
      if ((text.match(/\{"(request_id|errors)"/g) ?? []).length >= expectResponses && text.endsWith('}')) {
        socket.end();
        resolve(text);
      }
    });
    socket.on('error', reject);
    socket.write(payload);
  });
}

test('LIST works on the same port, with GET ?list=true and ?list=1 equivalent', async () => {
  const listed = await http(server.url, 'LIST', 'secret/metadata/list', { token: ROOT });
  assert.equal(listed.status, 200);
  assert.deepEqual(listed.body.data.keys, ['a', 'sub/']);
  for (const q of ['true', '1']) {
    const viaGet = await http(server.url, 'GET', `secret/metadata/list?list=${q}`, { token: ROOT });
    assert.deepEqual(viaGet.body.data.keys, ['a', 'sub/']);
  }
  const bad = await http(server.url, 'GET', 'secret/metadata/list?list=maybe', { token: ROOT });
  assert.deepEqual([bad.status, bad.body], [400, { errors: [] }]);
});

test('LIST between other requests on one keep-alive connection, after a chunked body', async () => {
  const port = Number(new URL(server.url).port);
  const body = JSON.stringify({ data: { v: 3 } });
  const chunked = `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
  const requests = [
    `POST /v1/secret/data/list/c HTTP/1.1\r\nHost: x\r\nX-Vault-Token: ${ROOT}\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n${chunked}`,
    `LIST /v1/secret/metadata/list HTTP/1.1\r\nHost: x\r\nX-Vault-Token: ${ROOT}\r\n\r\n`,
    `GET /v1/secret/data/list/c HTTP/1.1\r\nHost: x\r\nX-Vault-Token: ${ROOT}\r\n\r\n`,
  ];
  // One request at a time on the same socket (keep-alive, no pipelining).
  const text = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let sent = 0;
    socket.on('data', (chunk) => {
      received += chunk;
      const done = (received.match(/\{"request_id"/g) ?? []).length;
      if (done === sent && received.endsWith('}')) {
        if (sent === requests.length) {
          socket.end();
          resolve(received);
        } else socket.write(requests[sent++]!);
      }
    });
    socket.on('error', reject);
    socket.write(requests[sent++]!);
  });
  const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1]);
  assert.deepEqual(statuses, ['200', '200', '200']);
  assert.match(text, /"keys":\["a","c","sub\/"\]/);
  assert.match(text, /"data":\{"data":\{"v":3\}/);
});

test('tokens in X-Vault-Token, X-Secrets-Token and Authorization: Bearer', async () => {
  const variants: Record<string, string>[] = [{ 'X-Vault-Token': ROOT }, { 'X-Secrets-Token': ROOT }, { Authorization: `Bearer ${ROOT}` }];
  for (const headers of variants) {
    const r = await http(server.url, 'GET', 'auth/token/lookup-self', { headers });
    assert.equal(r.status, 200, JSON.stringify(headers));
  }
  const none = await http(server.url, 'GET', 'auth/token/lookup-self');
  assert.deepEqual([none.status, none.body], [403, { errors: ['permission denied'] }]);
  const basic = await http(server.url, 'GET', 'auth/token/lookup-self', { headers: { Authorization: 'Basic cm9vdDo=' } });
  assert.equal(basic.status, 403);
});

test('writes without data are 204 with an empty body; unknown fields are ignored with a warning', async () => {
  const put = await http(server.url, 'PUT', 'sys/policies/acl/p204', { token: ROOT, body: { policy: 'path "a" { capabilities = ["read"] }' } });
  assert.deepEqual([put.status, put.text], [204, '']);
  const extra = await http(server.url, 'PUT', 'sys/policies/acl/p204', { token: ROOT, body: { policy: 'path "a" { capabilities = ["read"] }', mount_point: 'x' } });
  assert.equal(extra.status, 200);
  assert.deepEqual(extra.body.warnings, ['Endpoint ignored these unrecognized parameters: [mount_point]']);
});

test('bad input gets Vault error bodies and changes nothing', async () => {
  const before = await http(server.url, 'GET', 'secret/data/list/a', { token: ROOT });
  const cases: Array<[string, string, Parameters<typeof http>[3], number, unknown]> = [
    ['POST', 'secret/data/list/a', { token: ROOT, raw: '{"data": {', headers: { 'Content-Type': 'application/json' } }, 400, undefined],
    ['POST', 'auth/token/create', { token: ROOT, body: { ttl: 'soon' } }, 400, { errors: ['error converting input soon for field "ttl": time: invalid duration "soon"'] }],
    ['POST', 'auth/token/create', { token: ROOT, body: { num_uses: 'many' } }, 400, { errors: ['error converting input many for field "num_uses": expected an integer'] }],
    ['POST', 'secret/data/list/a', { token: ROOT, body: { data: { v: 9 }, options: { cas: 'x' } } }, 400, { errors: ['error parsing check-and-set parameter'] }],
    ['POST', 'secret/data/list/a', { token: ROOT, body: [1, 2] }, 400, { errors: ['failed to decode JSON input: the body must be a JSON object'] }],
    ['GET', 'nomount/x', { token: ROOT }, 404, { errors: ['no handler for route "nomount/x". route entry not found.'] }],
    ['GET', 'secret/data/list/missing', { token: ROOT }, 404, { errors: [] }],
    ['PATCH', 'secret/data/list/a', { token: ROOT, body: { data: { v: 0 } } }, 415, { errors: ['PATCH requires Content-Type of application/json, provided application/json'.replace('application/json,', 'application/merge-patch+json,')] }],
    ['OPTIONS', 'sys/health', {}, 405, { errors: [] }],
    ['POST', 'secret/data/list/a', { token: 'hvs.nottherightone0000000', body: { data: { v: 9 } } }, 403, { errors: ['permission denied'] }],
  ];
  for (const [method, path, options, status, body] of cases) {
    const r = await http(server.url, method, path, options);
    assert.equal(r.status, status, `${method} ${path}: ${r.text}`);
    if (body !== undefined) assert.deepEqual(r.body, body, `${method} ${path}`);
    else assert.match(r.body.errors[0], /^failed to decode JSON input: /);
  }
  const dotted = await rawExchange(Number(new URL(server.url).port), `GET /v1/secret/data/a/../../sys/mounts HTTP/1.1\r\nHost: x\r\nX-Vault-Token: ${ROOT}\r\nConnection: close\r\n\r\n`, 1);
  assert.match(dotted, /^HTTP\/1\.1 400 /);
  assert.match(dotted, /\{"errors":\["path cannot contain parent references"\]\}$/);
  const oversize = await fetch(`${server.url}/v1/secret/data/big`, { method: 'POST', headers: { 'X-Vault-Token': ROOT }, body: 'x'.repeat(33 * 1024 * 1024) }).catch((e) => e as Error);
  assert.ok(!(oversize instanceof Error), `oversize request failed without a response: ${String(oversize)}`);
  assert.equal(oversize.status, 413);
  assert.deepEqual(await oversize.json(), { errors: ['http: request body too large'] });
  const afterwards = await http(server.url, 'GET', 'secret/data/list/a', { token: ROOT });
  assert.deepEqual(afterwards.body.data, before.body.data);
  assert.equal((await http(server.url, 'GET', 'sys/health')).status, 200, 'still serving');
});

test('strict KV v2 without the seed convenience: 404 with a warning and no errors key', async () => {
  const strict = await import('./helpers.js').then((h) => h.devServer({ strictVault: true }));
  try {
    const r = await http(strict.url, 'POST', 'secret/apikey/x', { token: ROOT, body: { apiKey: 'v' } });
    assert.equal(r.status, 404);
    assert.equal(r.body.errors, undefined);
    assert.equal(r.body.data, null);
    assert.deepEqual(r.body.warnings, ["Invalid path for a versioned K/V secrets engine. See the API docs for the appropriate API endpoints to use. If using the Vault CLI, use 'vault kv put' for this operation."]);
    assert.equal((await http(strict.url, 'GET', 'secret/data/apikey/x', { token: ROOT })).status, 404);
  } finally {
    await strict.close();
  }
});

test('an expired token stops working without a restart; tidy removes expired tokens nobody used', async () => {
  const token = (await http(server.url, 'POST', 'auth/token/create', { token: ROOT, body: { policies: ['default'], ttl: '1s' } })).body.auth.client_token;
  const unused = (await http(server.url, 'POST', 'auth/token/create', { token: ROOT, body: { policies: ['default'], ttl: '1s' } })).body.auth.accessor;
  assert.equal((await http(server.url, 'GET', 'auth/token/lookup-self', { token })).status, 200);
  await new Promise((r) => setTimeout(r, 1100));
  assert.equal((await http(server.url, 'GET', 'auth/token/lookup-self', { token })).status, 403);
  const listed = async () => (await http(server.url, 'LIST', 'auth/token/accessors', { token: ROOT })).body.data.keys as string[];
  assert.ok((await listed()).includes(unused), 'still stored until tidied');
  const tidy = await http(server.url, 'POST', 'auth/token/tidy', { token: ROOT });
  assert.equal(tidy.status, 202);
  // The tidy runs in the background: wait (bounded) for it to drop the expired token.
  for (let i = 0; i < 50 && (await listed()).includes(unused); i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(!(await listed()).includes(unused));
});

test('sealing needs sudo, then every non-sys request is 503; seal-status stays open', async () => {
  const s = await import('./helpers.js').then((h) => h.devServer());
  try {
    assert.equal((await http(s.url, 'PUT', 'sys/seal', { token: ROOT })).status, 204);
    const r = await http(s.url, 'GET', 'secret/data/x', { token: ROOT });
    assert.deepEqual([r.status, r.body], [503, { errors: ['Vault is sealed'] }]);
    assert.equal((await http(s.url, 'GET', 'sys/seal-status')).body.sealed, true);
    assert.equal((await http(s.url, 'GET', 'sys/health')).status, 503);
  } finally {
    await s.close();
  }
});

test('concurrent KV v2 writes to one key each get their own version; PATCH merges', async () => {
  const writes = await Promise.all(Array.from({ length: 12 }, (_, i) => http(server.url, 'POST', 'secret/data/race/k', { token: ROOT, body: { data: { i } } })));
  const versions = writes.map((w) => w.body.data.version).sort((a, b) => a - b);
  assert.deepEqual(versions, Array.from({ length: 12 }, (_, i) => i + 1));
  const meta = await http(server.url, 'GET', 'secret/metadata/race/k', { token: ROOT });
  assert.equal(meta.body.data.current_version, 12);
  assert.equal(Object.keys(meta.body.data.versions).length, 10, 'max_versions 10 keeps the newest ten');
  const patched = await http(server.url, 'PATCH', 'secret/data/race/k', { token: ROOT, body: { data: { extra: 'x' } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
  assert.equal(patched.status, 200);
  const read = await http(server.url, 'GET', 'secret/data/race/k', { token: ROOT });
  assert.equal(read.body.data.data.extra, 'x');
  assert.equal(read.body.data.metadata.version, 13);
  const wrap = await http(server.url, 'GET', 'secret/data/race/k', { token: ROOT, headers: { 'X-Vault-Wrap-TTL': '60s' } });
  assert.deepEqual([wrap.status, wrap.body], [400, { errors: ['response wrapping (X-Vault-Wrap-TTL) is not supported by this server'] }]);
});
