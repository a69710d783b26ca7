// `portcullis cluster serve` and `portcullis cluster kubeconfig` as a user runs them, and the
// cluster's part in `portcullis up`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { silentLogger } from '../../src/common/log.js';
import { clusterService } from '../../src/cluster/cli.js';
import { runCli, spawnCli, waitForOutput } from '../helpers/cli.js';
import { call } from './harness.js';

const KUBECTL = existsSync('/usr/bin/kubectl') ? path.join(path.dirname(realpathSync('/usr/bin/kubectl')), 'kubectl.1.33') : '';
let dir: string;
let server: ChildProcess | undefined;
let url: string;

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'portcullis-cluster-cli-'));
  writeFileSync(path.join(dir, 'tokens.csv'), 'jane-token,jane,u-jane\n');
  writeFileSync(path.join(dir, 'passwords.csv'), 'jane-password,jane,u-jane\n');
  server = spawnCli(['cluster', 'serve', '--data-dir', path.join(dir, 'data'), '--secure-port', '0', '--token-auth-file', path.join(dir, 'tokens.csv'), '--basic-auth-file', path.join(dir, 'passwords.csv'), '--log-level', 'warn']);
  let err = '';
  server.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const out = await waitForOutput(server, /listening on https:\/\/\S+\n/);
  url = /listening on (https:\/\/\S+)/.exec(out)![1]!;
  await new Promise((r) => setTimeout(r, 100));
  assert.match(err, /--basic-auth-file is deprecated/);
});

after(async () => {
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    await new Promise((r) => server!.on('exit', r));
  }
  rmSync(dir, { recursive: true, force: true });
});

test('cluster kubeconfig prints an admin kubeconfig that kubectl uses', { skip: KUBECTL ? undefined : 'kubectl not installed' }, async () => {
  const printed = await runCli(['cluster', 'kubeconfig', '--data-dir', path.join(dir, 'data'), '--server', url]);
  assert.equal(printed.code, 0, printed.stderr);
  const config = parse(printed.stdout);
  assert.equal(config.clusters[0].cluster.server, url);
  assert.equal(config.users[0].name, 'kubernetes-admin');
  assert.ok(config.users[0].user['client-certificate-data']);
  const file = path.join(dir, 'admin.kubeconfig');
  writeFileSync(file, printed.stdout);
  const whoami = await new Promise<string>((resolve, reject) =>
    execFile(KUBECTL, ['--kubeconfig', file, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.groups}'], { env: { HOME: dir, PATH: process.env.PATH ?? '' } }, (error, stdout, stderr) => (error ? reject(new Error(stderr)) : resolve(stdout))),
  );
  assert.equal(whoami, '["system:masters","system:authenticated"]');
});

test('cluster kubeconfig for token and password users', async () => {
  const token = await runCli(['cluster', 'kubeconfig', '--data-dir', path.join(dir, 'data'), '--server', url, '--user', 'jane', '--token', 'jane-token']);
  const tokenConfig = parse(token.stdout);
  assert.deepEqual(tokenConfig.users, [{ name: 'jane', user: { token: 'jane-token' } }]);
  assert.ok(tokenConfig.clusters[0].cluster['certificate-authority-data']);
  const answer = await call({ url, ca: Buffer.from(tokenConfig.clusters[0].cluster['certificate-authority-data'], 'base64').toString() }, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { token: 'jane-token', body: {} });
  assert.equal(answer.status, 201);
  assert.equal(answer.json().status.userInfo.username, 'jane');
  const basic = await runCli(['cluster', 'kubeconfig', '--data-dir', path.join(dir, 'data'), '--user', 'jane', '--username', 'jane', '--password', 'jane-password']);
  assert.deepEqual(parse(basic.stdout).users, [{ name: 'jane', user: { username: 'jane', password: 'jane-password' } }]);
  const missing = await runCli(['cluster', 'kubeconfig', '--data-dir', path.join(dir, 'data'), '--user', 'jane']);
  assert.equal(missing.code, 2);
  assert.equal(missing.stderr, 'portcullis: --user jane: give --token, or --username and --password (only the admin gets a certificate)\n');
  const noCa = await runCli(['cluster', 'kubeconfig', '--data-dir', path.join(dir, 'nothing-here')]);
  assert.equal(noCa.code, 1);
  assert.match(noCa.stderr, /no cluster CA \(pki\/ca\.crt\); start the server with --data-dir/);
});

test('serve refuses bad flags with one clear line', async () => {
  const halfTls = await runCli(['cluster', 'serve', '--data-dir', path.join(dir, 'x'), '--secure-port', '0', '--tls-cert-file', path.join(dir, 'data', 'pki', 'apiserver.crt')]);
  assert.equal(halfTls.code, 2);
  assert.equal(halfTls.stderr.trim().split('\n').at(-1), 'portcullis: --tls-cert-file and --tls-private-key-file go together');
  const mode = await runCli(['cluster', 'serve', '--data-dir', path.join(dir, 'y'), '--secure-port', '0', '--authorization-mode', 'RBAC,Magic']);
  assert.equal(mode.code, 1);
  assert.match(mode.stderr, /--authorization-mode: authorization mode "Magic" is not supported/);
  const tokens = await runCli(['cluster', 'serve', '--data-dir', path.join(dir, 'z'), '--secure-port', '0', '--token-auth-file', path.join(dir, 'absent.csv')]);
  assert.equal(tokens.code, 1);
  assert.match(tokens.stderr, /absent\.csv/);
  const port = await runCli(['cluster', 'serve', '--secure-port', 'abc']);
  assert.equal(port.code, 2);
});

test("up starts the cluster and writes an admin kubeconfig that works", async () => {
  const upDir = path.join(dir, 'up');
  const running = await clusterService.up.start({ dataDir: upDir, host: '127.0.0.1', port: 0, logger: silentLogger() });
  try {
    const file = path.join(upDir, 'admin.kubeconfig');
    assert.deepEqual(running.credentials[0], { label: 'admin kubeconfig', value: file });
    const config = parse(readFileSync(file, 'utf8'));
    assert.equal(config.clusters[0].cluster.server, running.url);
    const ca = Buffer.from(config.clusters[0].cluster['certificate-authority-data'], 'base64').toString();
    const user = config.users[0].user;
    const answer = await call({ url: running.url, ca }, 'GET', '/api/v1/namespaces', {
      cert: { cert: Buffer.from(user['client-certificate-data'], 'base64').toString(), key: Buffer.from(user['client-key-data'], 'base64').toString() },
    });
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.json().items.map((n: { metadata: { name: string } }) => n.metadata.name), ['default', 'kube-public', 'kube-system']);
  } finally {
    await running.close();
  }
});

test('state, certificates and keys survive a restart on the same data directory (SQLite)', async () => {
  const upDir = path.join(dir, 'restart');
  const start = () => clusterService.up.start({ dataDir: upDir, host: '127.0.0.1', port: 0, logger: silentLogger() });
  const credentials = () => {
    const config = parse(readFileSync(path.join(upDir, 'admin.kubeconfig'), 'utf8'));
    const user = config.users[0].user;
    return {
      ca: Buffer.from(config.clusters[0].cluster['certificate-authority-data'], 'base64').toString(),
      cert: { cert: Buffer.from(user['client-certificate-data'], 'base64').toString(), key: Buffer.from(user['client-key-data'], 'base64').toString() },
    };
  };
  const first = await start();
  const before = credentials();
  let created;
  try {
    created = await call({ url: first.url, ca: before.ca }, 'POST', '/api/v1/namespaces/default/secrets', { cert: before.cert, body: { metadata: { name: 'kept' }, stringData: { k: 'v' } } });
    assert.equal(created.status, 201, created.text);
  } finally {
    await first.close();
  }
  const second = await start();
  try {
    assert.equal(credentials().ca, before.ca);
    const read = await call({ url: second.url, ca: before.ca }, 'GET', '/api/v1/namespaces/default/secrets/kept', { cert: before.cert });
    assert.equal(read.status, 200, read.text);
    assert.deepEqual(read.json().data, { k: 'dg==' });
    assert.equal(read.json().metadata.resourceVersion, created.json().metadata.resourceVersion);
  } finally {
    await second.close();
  }
});
