// The library API the policy service uses: compile once, prepare, evaluate many times; OPA's result
// shape and error codes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compile, RegoError, RegoErrors } from '../../src/rego/index.js';

const AUTHZ = `package httpapi.authz
import input
default allow = false
allow {
  input.method == "GET"
  input.path == ["finance", "salary", input.user]
}
allow {
  input.method == "GET"
  input.path = ["finance", "salary", _]
  input.user == "admin"
}
`;

const ADMISSION = `package kubernetes.admission
deny[msg] {
  input.request.kind.kind == "Pod"
  image := input.request.object.spec.containers[_].image
  not startswith(image, "hooli.com/")
  msg := sprintf("image '%v' from untrusted registry", [image])
}
`;

const seed = compile(
  [
    { id: 'authz.rego', text: AUTHZ },
    { id: 'admission.rego', text: ADMISSION },
  ],
  { regoVersion: 'v0' },
);

test("the seed's HTTP API policy: {input} → {allow: true|false}", () => {
  const q = seed.prepareRef(['httpapi', 'authz']);
  const owner = q.eval({ input: { method: 'GET', path: ['finance', 'salary', 'bob'], user: 'bob' } });
  assert.deepEqual(owner.value, { allow: true });
  const other = q.eval({ input: { method: 'GET', path: ['finance', 'salary', 'bob'], user: 'alice' } });
  assert.deepEqual(other.value, { allow: false });
  const admin = seed.prepareRef(['httpapi', 'authz', 'allow']).eval({ input: { method: 'GET', path: ['finance', 'salary', 'bob'], user: 'admin' } });
  assert.equal(admin.value, true);
});

test("the seed's admission policy: deny messages for untrusted registries", () => {
  const pod = (images: string[]) => ({
    request: { kind: { kind: 'Pod' }, object: { spec: { containers: images.map((image) => ({ image })) } } },
  });
  const q = seed.prepareQuery('data.kubernetes.admission.deny');
  assert.deepEqual(q.eval({ input: pod(['hooli.com/web', 'nginx', 'evil.io/x']) }).results[0]!.expressions[0]!.value, [
    "image 'evil.io/x' from untrusted registry",
    "image 'nginx' from untrusted registry",
  ]);
  assert.deepEqual(q.eval({ input: pod(['hooli.com/web']) }).results[0]!.expressions[0]!.value, []);
});

test("query results in OPA's shape: expressions with text and location, bindings", () => {
  const r = seed.prepareQuery('x := 1 + 2; y = data.httpapi.authz.allow').eval({ input: { user: 'admin' } });
  assert.deepEqual(r, {
    results: [
      {
        expressions: [
          { value: true, text: 'x := 1 + 2', location: { row: 1, col: 1 } },
          { value: true, text: 'y = data.httpapi.authz.allow', location: { row: 1, col: 13 } },
        ],
        bindings: { x: 3, y: false },
      },
    ],
  });
  assert.deepEqual(seed.prepareQuery('data.nope.x').eval(), { results: [] });
});

test('numbers beyond 2^53 survive in and out as bigint', () => {
  const p = compile([{ id: 'n.rego', text: 'package n\nnext := input.n + 1\n' }]);
  assert.equal(p.prepareRef(['n', 'next']).eval({ input: { n: 12345678901234567890n } }).value, 12345678901234567891n);
});

test('base data is merged with virtual documents under data', () => {
  const p = compile([{ id: 'd.rego', text: 'package app\nadmins contains u if { some u in data.users; data.roles[u] == "admin" }\n' }]);
  const r = p.prepareQuery('data.app').eval({ data: { users: ['a', 'b'], roles: { a: 'admin', b: 'dev' }, app: { version: 2 } } });
  assert.deepEqual(r.results[0]!.expressions[0]!.value, { admins: ['a'], version: 2 });
});

test('complete rules with two values: eval_conflict_error', () => {
  const p = compile([{ id: 'c.rego', text: 'package c\np := 1\np := 2\n' }]);
  assert.throws(
    () => p.prepareRef(['c', 'p']).eval(),
    (e: unknown) => e instanceof RegoError && e.code === 'eval_conflict_error' && e.message === 'c.rego:3: eval_conflict_error: complete rules must not produce multiple outputs',
  );
});

test('a passed deadline cancels evaluation: eval_cancel_error', () => {
  const p = compile([{ id: 'slow.rego', text: 'package slow\nn := count([x | some x in numbers.range(1, 200000); x % 7 == 0])\n' }]);
  assert.throws(
    () => p.prepareRef(['slow', 'n']).eval({ deadline: Date.now() - 1 }),
    (e: unknown) => e instanceof RegoError && e.code === 'eval_cancel_error' && e.location?.file === 'slow.rego' && e.location.row === 2,
  );
});

test('with replaces input, data and functions for one expression only', () => {
  const p = compile([
    {
      id: 'w.rego',
      text: `package w
f(x) := x * 2
g(x) := x * 3
r := [a, b, c, d] if {
  a := f(1) with f as g
  b := f(1)
  c := input.v with input.v as 7
  d := data.k with data.k as "mocked"
}
`,
    },
  ]);
  assert.deepEqual(p.prepareRef(['w', 'r']).eval({ input: { v: 1 }, data: { k: 'real' } }).value, [3, 2, 7, 'mocked']);
});

test('compile reports every error at once with codes and locations', () => {
  assert.throws(
    () =>
      compile([
        { id: 'a.rego', text: 'package a\np if { x > 1 }\n' },
        { id: 'b.rego', text: 'package b\nq if {' },
      ]),
    (e: unknown) => {
      assert.ok(e instanceof RegoErrors);
      assert.deepEqual(
        e.errors.map((x) => [x.code, x.location?.file, x.location?.row]),
        [['rego_parse_error', 'b.rego', 2]],
      );
      return true;
    },
  );
});

test('a malformed module never throws an untyped exception', () => {
  const text = AUTHZ + ADMISSION.replace('package kubernetes.admission', '');
  for (let cut = 1; cut < text.length; cut += 3) {
    try {
      compile([{ id: 'cut.rego', text: text.slice(0, cut) }], { regoVersion: 'v0' });
    } catch (e) {
      assert.ok(e instanceof RegoErrors, `cut at ${cut}: ${String(e)}`);
      assert.ok(e.errors.every((x) => x.code.startsWith('rego_') && x.location), `cut at ${cut}: ${e.message}`);
    }
  }
});

test('explain notes carry trace() messages; metrics report the evaluation time', () => {
  const p = compile([{ id: 't.rego', text: 'package t\np if { trace("checking p"); input.x == 1 }\n' }]);
  const r = p.prepareQuery('data.t.p').eval({ input: { x: 1 }, explain: 'notes', metrics: true });
  assert.deepEqual(r.explanation, ['| Note checking p']);
  assert.equal(typeof r.metrics?.timer_rego_query_eval_ns, 'number');
  assert.deepEqual(r.results[0]!.expressions[0]!.value, true);
});

test('print output goes to the print hook, undefined arguments as <undefined>', () => {
  const p = compile([{ id: 'pr.rego', text: 'package pr\np if { print("user", input.user, input.missing) }\n' }]);
  const lines: string[] = [];
  p.prepareRef(['pr', 'p']).eval({ input: { user: 'bob' }, printHook: (line) => lines.push(line) });
  assert.deepEqual(lines, ['user bob <undefined>']);
});

test('METADATA annotations: rego.metadata.rule() and rego.metadata.chain()', () => {
  const p = compile([
    {
      id: 'm.rego',
      text: `# METADATA
# title: Billing
package billing

# METADATA
# title: Allow invoices
# custom:
#   severity: high
allow if {
  rego.metadata.rule().custom.severity == "high"
}

info := rego.metadata.chain()
`,
    },
  ]);
  assert.equal(p.prepareRef(['billing', 'allow']).eval().value, true);
  assert.deepEqual(p.prepareRef(['billing', 'info']).eval().value, [
    { path: ['data', 'billing', 'info'] },
    { path: ['data', 'billing'], annotations: { scope: 'package', title: 'Billing' } },
  ]);
  assert.deepEqual(p.modules.get('m.rego')!.rules[0]!.annotations?.map((a) => a.title), ['Allow invoices']);
});
