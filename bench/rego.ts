// Rego evaluation speed: median µs per decision with a prepared query, for three policies, each
// beside the same decision written as plain TypeScript in the same process (the ratio is what to
// watch; absolute numbers depend on the machine).
//   npm run bench -- rego [--iterations N]
import { compile } from '../src/rego/index.js';

const iterations = Number(argValue('--iterations') ?? 5000);

interface Case {
  name: string;
  decide: (i: number) => unknown;
  baseline: (i: number) => unknown;
}

// (a) The seed's HTTP API authorisation policy.
const authz = compile(
  [
    {
      id: 'authz.rego',
      text: `package httpapi.authz
import input
default allow = false
allow {
  input.method == "GET"
  input.path = ["finance", "salary", user]
  input.user == user
}
allow {
  input.method == "GET"
  input.path = ["finance", "salary", _]
  input.user == "admin"
}
`,
    },
  ],
  { regoVersion: 'v0' },
).prepareRef(['httpapi', 'authz']);
const authzInputs = Array.from({ length: 1000 }, (_, i) => ({
  method: i % 3 === 0 ? 'POST' : 'GET',
  path: ['finance', 'salary', `user${i % 50}`],
  user: i % 7 === 0 ? 'admin' : `user${i % 60}`,
}));
function authzBaseline(input: { method: string; path: string[]; user: string }): { allow: boolean } {
  const p = input.path;
  const salary = p.length === 3 && p[0] === 'finance' && p[1] === 'salary';
  return { allow: input.method === 'GET' && salary && (p[2] === input.user || input.user === 'admin') };
}

// (b) RBAC over 1,000 role bindings and 200 roles: users → roles → permissions.
const ROLES = 200;
const roles: Record<string, { permissions: Array<{ resource: string; action: string }> }> = {};
for (let r = 0; r < ROLES; r++) {
  roles[`role${r}`] = { permissions: Array.from({ length: 5 }, (_, j) => ({ resource: `res${(r * 5 + j) % 300}`, action: j % 2 ? 'write' : 'read' })) };
}
const bindings = Array.from({ length: 1000 }, (_, i) => ({ user: `user${i % 400}`, role: `role${(i * 7) % ROLES}` }));
const rbacData = { roles, bindings };
const rbac = compile([
  {
    id: 'rbac.rego',
    text: `package rbac
default allow := false
allow if {
  some binding in data.bindings
  binding.user == input.user
  some permission in data.roles[binding.role].permissions
  permission.resource == input.resource
  permission.action == input.action
}
`,
  },
]).prepareRef(['rbac', 'allow']);
const rbacInputs = Array.from({ length: 1000 }, (_, i) => ({ user: `user${(i * 13) % 450}`, resource: `res${(i * 17) % 300}`, action: i % 2 ? 'write' : 'read' }));
function rbacBaseline(input: { user: string; resource: string; action: string }): boolean {
  for (const b of bindings) {
    if (b.user !== input.user) continue;
    for (const p of roles[b.role]!.permissions) if (p.resource === input.resource && p.action === input.action) return true;
  }
  return false;
}

// (c) The seed's admission policy over a pod with 50 containers.
const admission = compile(
  [
    {
      id: 'admission.rego',
      text: `package kubernetes.admission
deny[msg] {
  input.request.kind.kind == "Pod"
  image := input.request.object.spec.containers[_].image
  not startswith(image, "hooli.com/")
  msg := sprintf("image '%v' from untrusted registry", [image])
}
`,
    },
  ],
  { regoVersion: 'v0' },
).prepareRef(['kubernetes', 'admission', 'deny']);
const pods = Array.from({ length: 100 }, (_, n) => ({
  request: {
    kind: { kind: 'Pod' },
    object: { spec: { containers: Array.from({ length: 50 }, (_, i) => ({ name: `c${i}`, image: (i + n) % 10 === 0 ? `evil.io/app${i}` : `hooli.com/app${i}` })) } },
  },
}));
function admissionBaseline(input: (typeof pods)[number]): string[] {
  if (input.request.kind.kind !== 'Pod') return [];
  const out = new Set<string>();
  for (const c of input.request.object.spec.containers) if (!c.image.startsWith('hooli.com/')) out.add(`image '${c.image}' from untrusted registry`);
  return [...out].sort();
}

const cases: Case[] = [
  { name: 'http api authz (seed)', decide: (i) => authz.eval({ input: authzInputs[i % authzInputs.length] }).value, baseline: (i) => authzBaseline(authzInputs[i % authzInputs.length]!) },
  { name: 'rbac 1000 bindings/200 roles', decide: (i) => rbac.eval({ input: rbacInputs[i % rbacInputs.length], data: rbacData }).value, baseline: (i) => rbacBaseline(rbacInputs[i % rbacInputs.length]!) },
  { name: 'admission, 50 containers', decide: (i) => admission.eval({ input: pods[i % pods.length] }).value, baseline: (i) => admissionBaseline(pods[i % pods.length]!) },
];

// The Rego and TypeScript decisions must agree before they are timed.
for (const c of cases) {
  for (let i = 0; i < 200; i++) {
    const a = JSON.stringify(c.decide(i));
    const b = JSON.stringify(c.baseline(i));
    if (a !== b) throw new Error(`${c.name}: Rego and baseline disagree on input ${i}: ${a} vs ${b}`);
  }
}

console.log(`rego: median µs per decision over ${iterations} decisions (prepared query vs plain TypeScript)`);
console.log(`${'benchmark'.padEnd(30)} ${'rego µs'.padStart(10)} ${'ts µs'.padStart(10)} ${'ratio'.padStart(8)}`);
for (const c of cases) {
  const rego = median(c.decide);
  const ts = median(c.baseline);
  console.log(`${c.name.padEnd(30)} ${rego.toFixed(2).padStart(10)} ${ts.toFixed(3).padStart(10)} ${(rego / ts).toFixed(1).padStart(7)}x`);
}

function median(run: (i: number) => unknown): number {
  for (let i = 0; i < Math.min(iterations, 1000); i++) run(i);
  const samples = new Float64Array(iterations);
  for (let i = 0; i < iterations; i++) {
    const t0 = process.hrtime.bigint();
    run(i);
    samples[i] = Number(process.hrtime.bigint() - t0) / 1000;
  }
  samples.sort();
  return samples[Math.floor(iterations / 2)]!;
}

function argValue(flag: string): string | undefined {
  const i = process.argv.indexOf(flag);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
