// The API machinery over real HTTPS: discovery, OpenAPI, versions, selectors and paging, watch,
// concurrency, protobuf bodies, and bad input (the right Status, the server keeps serving, stored
// objects unchanged).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { MemoryStorage } from '../../src/storage/index.js';
import { adminCertificate, clusterCa } from '../../src/cluster/pki.js';
import { call, startTestCluster, type HttpAnswer, type TestCluster } from './harness.js';

let cluster: TestCluster;
let storage: MemoryStorage;
let admin: { cert: string; key: string };

const as = (method: string, path: string, options: Parameters<typeof call>[3] = {}) => call(cluster, method, path, { cert: admin, ...options });

before(async () => {
  storage = new MemoryStorage();
  cluster = await startTestCluster({ storage });
  admin = await adminCertificate(await clusterCa(cluster.dir));
});
after(async () => {
  await cluster?.close();
  await storage?.close();
});

function status(answer: HttpAnswer): { code: number; reason: string; message: string } {
  const body = answer.json();
  assert.equal(body.kind, 'Status', answer.text);
  assert.equal(answer.status, body.code);
  return { code: body.code, reason: body.reason, message: body.message };
}

describe('discovery and OpenAPI', () => {
  test('/version is served to anonymous callers', async () => {
    const answer = await call(cluster, 'GET', '/version?timeout=5s');
    assert.equal(answer.status, 200);
    assert.equal(answer.json().major, '1');
    assert.equal(answer.json().minor, '33');
  });

  test('health endpoints answer ok', async () => {
    for (const path of ['/healthz', '/livez', '/readyz']) assert.equal((await call(cluster, 'GET', path)).text, 'ok');
    assert.match((await call(cluster, 'GET', '/readyz?verbose')).text, /\[\+\]ping ok\n[\s\S]*readyz check passed\n$/);
  });

  test('legacy discovery lists groups and resources', async () => {
    assert.deepEqual((await as('GET', '/api')).json().versions, ['v1']);
    const groups = (await as('GET', '/apis')).json();
    assert.equal(groups.kind, 'APIGroupList');
    const admission = groups.groups.find((g: { name: string }) => g.name === 'admissionregistration.k8s.io');
    assert.deepEqual(admission.preferredVersion, { groupVersion: 'admissionregistration.k8s.io/v1', version: 'v1' });
    assert.deepEqual(admission.versions.map((v: { version: string }) => v.version), ['v1', 'v1beta1']);
    const core = (await as('GET', '/api/v1')).json();
    const pods = core.resources.find((r: { name: string }) => r.name === 'pods');
    assert.deepEqual({ kind: pods.kind, namespaced: pods.namespaced, shortNames: pods.shortNames }, { kind: 'Pod', namespaced: true, shortNames: ['po'] });
    assert.ok(core.resources.some((r: { name: string; group?: string }) => r.name === 'serviceaccounts/token' && r.group === 'authentication.k8s.io'));
    const beta = (await as('GET', '/apis/admissionregistration.k8s.io/v1beta1')).json();
    assert.deepEqual(beta.resources.map((r: { name: string }) => r.name).sort(), ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations']);
  });

  test('aggregated discovery answers in the version the Accept header asks for (G4)', async () => {
    for (const version of ['v2beta1', 'v2']) {
      const answer = await as('GET', '/apis', { headers: { accept: `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList,application/json` } });
      assert.equal(answer.headers['content-type'], `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`);
      assert.equal(answer.json().apiVersion, `apidiscovery.k8s.io/${version}`);
      assert.ok(answer.json().items.some((g: { metadata: { name: string } }) => g.metadata.name === 'rbac.authorization.k8s.io'));
    }
    const core = (await as('GET', '/api', { headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json' } })).json();
    assert.equal(core.items[0].metadata.name, '');
    assert.ok(core.items[0].versions[0].resources.some((r: { resource: string; scope: string }) => r.resource === 'namespaces' && r.scope === 'Cluster'));
  });

  test('/openapi/v2 is the protobuf swagger 2.0 stub and /openapi/v3 advertises server-side field validation', async () => {
    const v2 = await as('GET', '/openapi/v2', { headers: { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' } });
    assert.equal(v2.headers['content-type'], 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    assert.equal(v2.text, '\n\u00032.0');
    const root = (await as('GET', '/openapi/v3')).json();
    const url = root.paths['api/v1'].serverRelativeURL as string;
    assert.match(url, /^\/openapi\/v3\/api\/v1\?hash=[0-9A-F]+$/);
    const doc = (await as('GET', url)).json();
    const patch = doc.paths['/api/v1/namespaces/{namespace}/pods/{name}'].patch;
    assert.deepEqual(patch['x-kubernetes-group-version-kind'], { group: '', version: 'v1', kind: 'Pod' });
    assert.ok(patch.parameters.some((p: { name: string }) => p.name === 'fieldValidation'));
  });
});

describe('objects', () => {
  test('a webhook configuration created at v1beta1 keeps v1beta1 defaults and is the same object at v1 (G13)', async () => {
    const body = {
      apiVersion: 'admissionregistration.k8s.io/v1beta1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'deny.example.com' },
      webhooks: [{ name: 'deny.example.com', clientConfig: { url: 'https://127.0.0.1:9443/validate' }, rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }] }],
    };
    const created = await as('POST', '/apis/admissionregistration.k8s.io/v1beta1/validatingwebhookconfigurations', { body });
    assert.equal(created.status, 201, created.text);
    const hook = created.json().webhooks[0];
    assert.deepEqual(
      { failurePolicy: hook.failurePolicy, matchPolicy: hook.matchPolicy, sideEffects: hook.sideEffects, timeoutSeconds: hook.timeoutSeconds, admissionReviewVersions: hook.admissionReviewVersions, scope: hook.rules[0].scope },
      { failurePolicy: 'Ignore', matchPolicy: 'Exact', sideEffects: 'Unknown', timeoutSeconds: 30, admissionReviewVersions: ['v1beta1'], scope: '*' },
    );
    const v1 = (await as('GET', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/deny.example.com')).json();
    assert.equal(v1.apiVersion, 'admissionregistration.k8s.io/v1');
    assert.equal(v1.metadata.uid, created.json().metadata.uid);
    assert.equal(v1.webhooks[0].failurePolicy, 'Ignore');

    const invalid = await as('POST', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', {
      body: { metadata: { name: 'x' }, webhooks: [{ name: 'mutate.example.com', clientConfig: { url: 'https://h/m' } }] },
    });
    assert.deepEqual(status(invalid), {
      code: 422,
      reason: 'Invalid',
      message: 'MutatingWebhookConfiguration.admissionregistration.k8s.io "x" is invalid: [webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun, webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1]',
    });
  });

  test('list with label and field selectors, limit and continue', async () => {
    await as('POST', '/api/v1/namespaces', { body: { metadata: { name: 'paging' } } });
    for (let i = 0; i < 5; i++) {
      const answer = await as('POST', '/api/v1/namespaces/paging/configmaps', { body: { metadata: { name: `cm${i}`, labels: { tier: i % 2 ? 'odd' : 'even' } } } });
      assert.equal(answer.status, 201, answer.text);
    }
    const names = (a: HttpAnswer) => a.json().items.map((i: { metadata: { name: string } }) => i.metadata.name);
    assert.deepEqual(names(await as('GET', '/api/v1/namespaces/paging/configmaps?labelSelector=tier%3Dodd')), ['cm1', 'cm3']);
    assert.deepEqual(names(await as('GET', '/api/v1/namespaces/paging/configmaps?labelSelector=tier+in+(even),tier!%3Dnone')), ['cm0', 'cm2', 'cm4']);
    assert.deepEqual(names(await as('GET', '/api/v1/namespaces/paging/configmaps?fieldSelector=metadata.name%3Dcm2')), ['cm2']);
    const first = await as('GET', '/api/v1/namespaces/paging/configmaps?limit=2');
    assert.deepEqual(names(first), ['cm0', 'cm1']);
    assert.equal(first.json().metadata.remainingItemCount, 3);
    const token = first.json().metadata.continue as string;
    const second = await as('GET', `/api/v1/namespaces/paging/configmaps?limit=2&continue=${encodeURIComponent(token)}`);
    assert.deepEqual(names(second), ['cm2', 'cm3']);
    assert.equal(second.json().metadata.resourceVersion, first.json().metadata.resourceVersion);

    const removed = await as('DELETE', '/api/v1/namespaces/paging/configmaps?labelSelector=tier%3Deven');
    assert.equal(removed.status, 200);
    assert.deepEqual(names(await as('GET', '/api/v1/namespaces/paging/configmaps')), ['cm1', 'cm3']);
  });

  test('Table output for kubectl get', async () => {
    const table = (await as('GET', '/api/v1/namespaces/paging/configmaps', { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' } })).json();
    assert.equal(table.kind, 'Table');
    assert.deepEqual(table.columnDefinitions.map((c: { name: string }) => c.name), ['Name', 'Data', 'Age']);
    assert.deepEqual(table.rows[0].cells.slice(0, 2), ['cm1', 0]);
    assert.equal(table.rows[0].object.kind, 'PartialObjectMetadata');
  });

  test('optimistic concurrency: a stale resourceVersion is a 409 Conflict', async () => {
    const created = (await as('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'occ' }, data: { a: '1' } } })).json();
    const fresh = await as('PUT', '/api/v1/namespaces/default/configmaps/occ', { body: { ...created, data: { a: '2' } } });
    assert.equal(fresh.status, 200);
    assert.notEqual(fresh.json().metadata.resourceVersion, created.metadata.resourceVersion);
    const stale = await as('PUT', '/api/v1/namespaces/default/configmaps/occ', { body: { ...created, data: { a: '3' } } });
    assert.deepEqual(status(stale), { code: 409, reason: 'Conflict', message: 'Operation cannot be fulfilled on configmaps "occ": the object has been modified; please apply your changes to the latest version and try again' });
    assert.equal((await as('GET', '/api/v1/namespaces/default/configmaps/occ')).json().data.a, '2');
    const exists = await as('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'occ' } } });
    assert.deepEqual(status(exists), { code: 409, reason: 'AlreadyExists', message: 'configmaps "occ" already exists' });
  });

  test('pods are deleted at once (G14) and a namespace takes its objects with it', async () => {
    await as('POST', '/api/v1/namespaces', { body: { metadata: { name: 'doomed' } } });
    await as('POST', '/api/v1/namespaces/doomed/pods', { body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x' }] } } });
    assert.equal((await as('DELETE', '/api/v1/namespaces/doomed/pods/p', { body: { propagationPolicy: 'Background' } })).status, 200);
    assert.deepEqual(status(await as('GET', '/api/v1/namespaces/doomed/pods/p')), { code: 404, reason: 'NotFound', message: 'pods "p" not found' });
    await as('POST', '/api/v1/namespaces/doomed/configmaps', { body: { metadata: { name: 'c' } } });
    assert.equal((await as('DELETE', '/api/v1/namespaces/doomed')).status, 200);
    assert.equal((await as('GET', '/api/v1/namespaces/doomed/configmaps/c')).status, 404);
    assert.deepEqual(status(await as('DELETE', '/api/v1/namespaces/default')), { code: 403, reason: 'Forbidden', message: 'namespaces "default" is forbidden: this namespace may not be deleted' });
  });

  test('ClusterRole aggregation writes the union of the selected roles back', async () => {
    const created = await as('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      body: { metadata: { name: 'widgets-view', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }, rules: [{ apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get'] }] },
    });
    assert.equal(created.status, 201, created.text);
    await eventually(async () => {
      const view = (await as('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/view')).json();
      return view.rules.some((r: { resources?: string[] }) => r.resources?.includes('widgets'));
    });
  });

  test('Secrets are encrypted at rest; other kinds are plain JSON', async () => {
    const created = await as('POST', '/api/v1/namespaces/default/secrets', { body: { metadata: { name: 'db' }, stringData: { password: 'hunter2' } } });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.json().data, { password: Buffer.from('hunter2').toString('base64') });
    assert.equal(created.json().type, 'Opaque');
    const raw = Buffer.from((await storage.get('/registry/core/secrets/default/db'))!.value);
    assert.equal(raw.subarray(0, 23).toString(), 'k8s:enc:aesgcm:v1:key1:');
    assert.ok(!raw.includes('hunter2') && !raw.includes(Buffer.from('hunter2').toString('base64')));
    assert.deepEqual((await as('GET', '/api/v1/namespaces/default/secrets/db')).json().data, { password: 'aHVudGVyMg==' });
    const cm = Buffer.from((await storage.get('/registry/core/configmaps/default/occ'))!.value).toString();
    assert.equal(JSON.parse(cm).metadata.name, 'occ');
  });

  test('a service-account token request checks its duration', async () => {
    const short = await as('POST', '/api/v1/namespaces/default/serviceaccounts/default/token', { body: { spec: { expirationSeconds: 60 } } });
    assert.deepEqual(status(short), { code: 422, reason: 'Invalid', message: 'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes' });
    const ok = await as('POST', '/api/v1/namespaces/default/serviceaccounts/default/token', { body: { spec: { audiences: ['a'] } } });
    assert.equal(ok.status, 201);
    assert.equal(ok.json().spec.expirationSeconds, 3600);
    const review = await as('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { body: { spec: { token: ok.json().status.token, audiences: ['a'] } } });
    assert.equal(review.json().status.user.username, 'system:serviceaccount:default:default');
  });
});

describe('protobuf request bodies (G2)', () => {
  test('a SelfSubjectAccessReview sent as kubectl 1.33 sends it is answered in JSON', async () => {
    const resourceAttributes = message([[1, 'default'], [2, 'list'], [3, ''], [4, ''], [5, 'pods'], [6, ''], [7, '']]);
    const raw = message([[1, message([])], [2, message([[1, resourceAttributes]])], [3, message([])]]);
    const body = Buffer.concat([Buffer.from('k8s\0', 'latin1'), message([[1, message([[1, 'authorization.k8s.io/v1'], [2, 'SelfSubjectAccessReview']])], [2, raw], [3, ''], [4, '']])]);
    const answer = await call(cluster, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      token: 'jane-token', body, contentType: 'application/vnd.kubernetes.protobuf', headers: { accept: 'application/vnd.kubernetes.protobuf,application/json' },
    });
    assert.equal(answer.status, 201, answer.text);
    assert.equal(answer.headers['content-type'], 'application/json');
    assert.deepEqual(answer.json().spec.resourceAttributes, { namespace: 'default', verb: 'list', group: '', version: '', resource: 'pods', subresource: '', name: '' });
    assert.equal(answer.json().status.allowed, false);
  });

  test('a ConfigMap with data and labels', async () => {
    const meta = message([[1, 'from-proto'], [11, message([[1, 'app'], [2, 'x']])]]);
    const raw = message([[1, meta], [2, message([[1, 'k'], [2, 'v']])]]);
    const body = Buffer.concat([Buffer.from('k8s\0', 'latin1'), message([[1, message([[1, 'v1'], [2, 'ConfigMap']])], [2, raw]])]);
    const answer = await as('POST', '/api/v1/namespaces/default/configmaps', { body, contentType: 'application/vnd.kubernetes.protobuf' });
    assert.equal(answer.status, 201, answer.text);
    assert.deepEqual([answer.json().data, answer.json().metadata.labels], [{ k: 'v' }, { app: 'x' }]);
  });
});

describe('watch', () => {
  test('from a resourceVersion: later changes only; bookmarks; 410 Expired for a compacted one', async () => {
    const created = (await as('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'watched' } } })).json();
    const rv = created.metadata.resourceVersion as string;
    const stream = openWatch(`/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${rv}&fieldSelector=metadata.name%3Dwatched`);
    await as('PATCH', '/api/v1/namespaces/default/configmaps/watched', { body: { data: { a: '1' } }, contentType: 'application/merge-patch+json' });
    const event = await stream.next();
    assert.equal(event.type, 'MODIFIED');
    assert.deepEqual(event.object.data, { a: '1' });
    assert.equal(event.object.kind, 'ConfigMap');
    stream.close();

    const initial = openWatch('/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&fieldSelector=metadata.name%3Dwatched');
    assert.equal((await initial.next()).type, 'ADDED');
    const bookmark = await initial.next();
    assert.equal(bookmark.type, 'BOOKMARK');
    assert.equal(bookmark.object.metadata.annotations['k8s.io/initial-events-end'], 'true');
    initial.close();

    const exact = await as('GET', `/api/v1/namespaces/default/configmaps?resourceVersion=${rv}&resourceVersionMatch=Exact&fieldSelector=metadata.name%3Dwatched`);
    assert.equal(exact.status, 200, exact.text);
    assert.equal(exact.json().items[0].data, undefined, 'the list as of the creation, before the patch');
    assert.equal(exact.json().metadata.resourceVersion, rv);

    await storage.compact(await storage.currentRevision());
    const tooOld = await as('GET', `/api/v1/namespaces/default/configmaps?resourceVersion=${rv}&resourceVersionMatch=Exact`);
    assert.deepEqual(status(tooOld), { code: 410, reason: 'Expired', message: 'The resourceVersion for the provided list is too old.' });
    const old = openWatch(`/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${rv}`);
    const error = await old.next();
    assert.equal(error.type, 'ERROR');
    assert.equal(error.object.code, 410);
    assert.equal(error.object.reason, 'Expired');
    assert.match(error.object.message, new RegExp(`^too old resource version: ${rv} \\(\\d+\\)$`));
    old.close();
  });
});

describe('bad input', () => {
  const cmPath = '/api/v1/namespaces/default/configmaps';
  before(async () => {
    await as('POST', cmPath, { body: { metadata: { name: 'keep' }, data: { a: '1' } } });
  });

  const cases: Array<[string, () => Promise<HttpAnswer>, number, string, string | RegExp]> = [
    ['malformed JSON', () => as('POST', cmPath, { body: '{"metadata": {' }), 400, 'BadRequest', /^error decoding request body: /],
    ['malformed YAML', () => as('POST', cmPath, { body: 'metadata: [a', contentType: 'application/yaml' }), 400, 'BadRequest', /^error converting YAML to JSON: /],
    ['a wrong kind for the URL', () => as('POST', cmPath, { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } } }), 400, 'BadRequest', 'the kind in the request body (Secret) does not match the kind of the URL (ConfigMap)'],
    ['an invalid name', () => as('POST', cmPath, { body: { metadata: { name: 'Bad_Name' } } }), 422, 'Invalid', /^ConfigMap "Bad_Name" is invalid: metadata\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of/],
    ['a missing namespace', () => as('POST', '/api/v1/namespaces/nope/configmaps', { body: { metadata: { name: 'x' } } }), 404, 'NotFound', 'namespaces "nope" not found'],
    ['an unknown field with fieldValidation=Strict', () => as('POST', `${cmPath}?fieldValidation=Strict`, { body: { metadata: { name: 'strict' }, spec: { foo: 1 } } }), 400, 'BadRequest', 'strict decoding error: unknown field "spec"'],
    ['a wrong JSON type', () => as('POST', cmPath, { body: { metadata: { name: 'typed', labels: ['a'] } } }), 400, 'BadRequest', /metadata\.labels: expected object, got array/],
    ['a bad label selector', () => as('GET', `${cmPath}?labelSelector=a%20in%20(b`), 400, 'BadRequest', /^unable to parse requirement/],
    ['an unsupported field selector', () => as('GET', `${cmPath}?fieldSelector=spec.foo%3Db`), 400, 'BadRequest', 'field label not supported: spec.foo'],
    ['an oversized body', () => as('POST', cmPath, { body: { metadata: { name: 'big' }, data: { a: 'x'.repeat(4 * 1024 * 1024) } } }), 413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728'],
    ['an unknown patch type', () => as('PATCH', `${cmPath}/keep`, { body: '{}', contentType: 'text/plain' }), 415, 'UnsupportedMediaType', /^the body of the request was in an unknown format/],
    ['a JSON patch that fails', () => as('PATCH', `${cmPath}/keep`, { body: [{ op: 'replace', path: '/data/missing/deep', value: 1 }], contentType: 'application/json-patch+json' }), 422, 'Invalid', /^the server rejected our request due to an error in our request/],
    ['a merge patch that gives a field the wrong type', () => as('PATCH', `${cmPath}/keep`, { body: { metadata: { labels: 7 } }, contentType: 'application/merge-patch+json' }), 400, 'BadRequest', /metadata\.labels: expected object, got number/],
    ['a strategic patch adding an unknown field with Strict', () => as('PATCH', `${cmPath}/keep?fieldValidation=Strict`, { body: { bogus: 1 }, contentType: 'application/strategic-merge-patch+json' }), 400, 'BadRequest', 'strict decoding error: unknown field "bogus"'],
    ['a protobuf body that is not one', () => as('POST', cmPath, { body: Buffer.from('k8s\0\xff\xff', 'latin1'), contentType: 'application/vnd.kubernetes.protobuf' }), 400, 'BadRequest', /^unable to decode protobuf body: /],
    ['an unsupported verb', () => as('PUT', '/api/v1/namespaces/default/configmaps', { body: {} }), 405, 'MethodNotAllowed', 'update is not supported on resources of kind "configmaps"'],
    ['a POST to a named object', () => as('POST', `${cmPath}/keep`, { body: { metadata: { name: 'keep' } } }), 405, 'MethodNotAllowed', 'create is not supported on resources of kind "configmaps"'],
    ['an unknown resource', () => as('GET', '/api/v1/widgets'), 404, 'NotFound', 'the server could not find the requested resource'],
  ];
  for (const [what, send, code, reason, message] of cases) {
    test(`${what}: ${code} ${reason}`, async () => {
      const answer = await send();
      const s = status(answer);
      assert.equal(s.code, code, answer.text);
      assert.equal(s.reason, reason);
      if (typeof message === 'string') assert.equal(s.message, message);
      else assert.match(s.message, message);
    });
  }

  test('Warn reports unknown fields in a Warning header and stores the object', async () => {
    const answer = await as('POST', `${cmPath}?fieldValidation=Warn`, { body: { metadata: { name: 'warned' }, extra: 1 } });
    assert.equal(answer.status, 201);
    assert.equal(answer.headers.warning, '299 - "unknown field \\"extra\\""');
  });

  test('after all of it the server serves and the stored object is unchanged', async () => {
    const kept = await as('GET', `${cmPath}/keep`);
    assert.equal(kept.status, 200);
    assert.deepEqual(kept.json().data, { a: '1' });
    assert.equal(kept.json().metadata.labels, undefined);
    assert.equal(kept.json().bogus, undefined);
    for (const name of ['s', 'Bad_Name', 'strict', 'typed', 'big']) assert.equal((await as('GET', `${cmPath}/${name}`)).status, 404);
  });
});

/** A protobuf message from (field number, value) pairs: strings and nested messages (Buffers). */
function message(fields: Array<[number, string | Buffer]>): Buffer {
  const parts: Buffer[] = [];
  for (const [number, value] of fields) {
    const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
    parts.push(varint((number << 3) | 2), varint(bytes.length), bytes);
  }
  return Buffer.concat(parts);
}

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return Buffer.from(out);
}

interface WatchStream {
  next(): Promise<any>;
  close(): void;
}

function openWatch(path: string): WatchStream {
  const queue: any[] = [];
  const waiting: Array<(v: any) => void> = [];
  let buffer = '';
  const req = httpsRequest(new URL(path, cluster.url), { ca: cluster.ca, ...admin }, (res) => {
    res.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const event = JSON.parse(buffer.slice(0, nl));
        buffer = buffer.slice(nl + 1);
        const w = waiting.shift();
        if (w) w(event);
        else queue.push(event);
      }
    });
    res.on('error', () => undefined);
  });
  req.on('error', () => undefined);
  req.end();
  return {
    next: () =>
      queue.length
        ? Promise.resolve(queue.shift())
        : new Promise((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`no watch event on ${path}`)), 10_000);
            waiting.push((v) => {
              clearTimeout(timer);
              resolve(v);
            });
          }),
    close: () => req.destroy(),
  };
}

async function eventually(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met within 10 s');
    await new Promise((r) => setTimeout(r, 50));
  }
}
