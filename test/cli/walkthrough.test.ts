// docs/walkthrough.md, run as a user runs it: `portcullis up`, then curl-equivalent requests and the
// real kubectl against what it prints; then a restart on the same data directory keeps everything.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { spawnCli, waitForOutput } from '../helpers/cli.js';
import { kubectl, kubectlOk } from '../helpers/kubectl.js';

const PORTS = ['--policy-port', '0', '--secrets-port', '0', '--cluster-port', '0'];

interface Stack {
  readonly child: ChildProcess;
  readonly policy: string;
  readonly secrets: string;
  readonly kubeconfig: string;
  readonly rootToken: string;
}

async function up(dir: string): Promise<Stack> {
  const child = spawnCli(['up', '--data-dir', dir, ...PORTS]);
  const banner = await waitForOutput(child, /Press Ctrl-C to stop\./, 120_000);
  const find = (re: RegExp) => {
    const m = re.exec(banner);
    assert.ok(m, `${re} not in:\n${banner}`);
    return m[1]!;
  };
  return {
    child,
    policy: find(/^policy: (\S+)$/m),
    secrets: find(/^secrets: (\S+)$/m),
    kubeconfig: find(/admin kubeconfig: (\S+)$/m),
    rootToken: (await readFile(find(/root token: (\S+)$/m), 'utf8')).trim(),
  };
}

async function down(stack: Stack): Promise<void> {
  stack.child.kill('SIGTERM');
  const [code] = await once(stack.child, 'exit');
  assert.equal(code, 0);
}

async function eventually<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const status = async (kubeconfig: string, name: string) => {
  const out = await kubectlOk(['get', 'configmap', '-n', 'opa', name, '-o', 'jsonpath={.metadata.annotations.openpolicyagent\\.org/kube-mgmt-status}'], { kubeconfig });
  return out ? (JSON.parse(out) as { status: string }) : undefined;
};

test('the walkthrough on portcullis up: secrets, the policy engine, admission; and all of it after a restart', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'walkthrough-'));
  let stack: Stack | undefined;
  try {
    stack = await up(dir);
    const { kubeconfig } = stack;

    // Secrets: the seed's API key pair.
    const stored = await fetch(`${stack.secrets}/v1/secret/apikey/billing`, { method: 'POST', headers: { 'X-Vault-Token': stack.rootToken }, body: JSON.stringify({ apiKey: 'abc123' }) });
    assert.equal(stored.status, 200);
    const read = await fetch(`${stack.secrets}/v1/secret/data/apikey/billing`, { headers: { 'X-Secrets-Token': stack.rootToken } });
    assert.deepEqual(((await read.json()) as { data: { data: unknown } }).data.data, { apiKey: 'abc123' });

    // The policy engine: the seed's policy (Rego v0) and its two queries, answered exactly.
    const put = await fetch(`${stack.policy}/v1/policies/httpapi`, { method: 'PUT', body: await readFile('examples/http-authz/policy.rego') });
    assert.equal(put.status, 200);
    const ask = async (user: string) =>
      (await fetch(`${stack!.policy}/v1/data/httpapi/authz`, { method: 'POST', body: JSON.stringify({ input: { method: 'GET', path: ['salary', 'bob'], user } }) })).text();
    assert.equal(await ask('bob'), '{"result":{"allow":true}}\n'); // OPA's encoder ends bodies with a newline
    assert.equal(await ask('alice'), '{"result":{"allow":false}}\n');

    // Admission: system.main is loaded by the sidecar; the seed's policy ConfigMap; the two pods.
    assert.deepEqual(await eventually('system.main loaded', () => status(kubeconfig, 'opa-default-system-main')), { status: 'ok' });
    assert.equal(await kubectlOk(['apply', '-f', 'examples/admission/untrusted-registry.yaml'], { kubeconfig }), 'configmap/untrusted-registry created\n');
    assert.deepEqual(await eventually('policy loaded', () => status(kubeconfig, 'untrusted-registry')), { status: 'ok' });
    assert.equal(await kubectlOk(['apply', '-f', 'examples/admission/good-pod.yaml'], { kubeconfig }), 'pod/good created\n');
    const bad = await kubectl(['apply', '-f', 'examples/admission/bad-pod.yaml'], { kubeconfig });
    assert.equal(bad.code, 1);
    assert.equal(
      bad.stderr.trim(),
      'Error from server: error when creating "examples/admission/bad-pod.yaml": admission webhook "validating-webhook.openpolicyagent.org" denied the request: image \'evil.example/nginx\' from untrusted registry',
    );
    await eventually('pod replicated', async () => {
      const res = (await (await fetch(`${stack!.policy}/v1/data/kubernetes/pods/default/good`)).json()) as { result?: unknown };
      return res.result;
    });
    await down(stack);

    // Restart on the same data directory: the objects, the secret and the policies are all there,
    // and admission still refuses the bad pod.
    stack = await up(dir);
    assert.match(await kubectlOk(['get', 'pods', '-o', 'name'], { kubeconfig: stack.kubeconfig }), /^pod\/good$/m);
    const again = await fetch(`${stack.secrets}/v1/secret/data/apikey/billing`, { headers: { 'X-Vault-Token': stack.rootToken } });
    assert.deepEqual(((await again.json()) as { data: { data: unknown } }).data.data, { apiKey: 'abc123' });
    assert.equal(await ask('bob'), '{"result":{"allow":true}}\n'); // OPA's encoder ends bodies with a newline
    const stillBad = await eventually('admission after restart', async () => {
      const run = await kubectl(['apply', '-f', 'examples/admission/bad-pod.yaml'], { kubeconfig: stack!.kubeconfig });
      return run.code === 1 && /denied the request/.test(run.stderr) ? run : undefined;
    });
    assert.match(stillBad.stderr, /image 'evil.example\/nginx' from untrusted registry/);
    await down(stack);
    stack = undefined;
  } finally {
    stack?.child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
});
