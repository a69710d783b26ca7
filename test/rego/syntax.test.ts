// The parser: both dialects, OPA's AST shape with locations, and parse errors with code and position.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseModule, parseQuery, parseTerm } from '../../src/rego/syntax/parser.js';
import { RegoErrors } from '../../src/rego/errors.js';

function parseError(run: () => unknown): { code: string; message: string; location?: { file: string; row: number; col: number } } {
  try {
    run();
  } catch (e) {
    assert.ok(e instanceof RegoErrors, `expected RegoErrors, got ${String(e)}`);
    const first = e.errors[0]!;
    return { code: first.code, message: first.text, ...(first.location ? { location: first.location } : {}) };
  }
  assert.fail('expected a parse error');
}

test('v0 module: default, bare rule bodies, partial set heads, functions', () => {
  const m = parseModule(
    'authz.rego',
    `package httpapi.authz
import input
default allow = false
allow { input.user == "admin" }
deny[msg] { msg := "no" }
f(x) = y { y := x + 1 }
`,
    'v0',
  );
  assert.deepEqual(m.package.path.map((t) => t.value), ['data', 'httpapi', 'authz']);
  assert.equal(m.rules.length, 4);
  assert.equal(m.rules[0]!.default, true);
  assert.deepEqual(m.rules[0]!.head.value, { type: 'boolean', value: false, location: { file: 'authz.rego', row: 3, col: 17 } });
  assert.equal(m.rules[2]!.head.key?.type, 'var');
  assert.deepEqual(m.rules[3]!.head.args?.map((a) => a.value), ['x']);
  assert.deepEqual(m.rules[1]!.location, { file: 'authz.rego', row: 4, col: 1 });
  // The AST survives JSON.
  assert.deepEqual(JSON.parse(JSON.stringify(m)), m);
});

test('v1 module: if, contains, ref heads, else chains, every, some-in', () => {
  const m = parseModule(
    'p.rego',
    `package p
a.b[c] := 1 if some c in ["x"]
s contains x if { some x in [1, 2] }
v := 1 if { false } else := 2
ok if { every x in [1] { x > 0 } }
`,
  );
  assert.deepEqual(m.rules[0]!.head.ref.map((t) => t.type), ['var', 'string', 'var']);
  assert.equal(m.rules[1]!.head.key?.value, 'x');
  assert.equal(m.rules[2]!.else?.head.value?.value, '2');
  assert.equal((m.rules[3]!.body[0]!.terms as { type: string }).type, 'every');
});

test('v1 requires if before a rule body, with OPA\'s message and position', () => {
  assert.deepEqual(parseError(() => parseModule('x.rego', 'package x\nallow { true }\n')), {
    code: 'rego_parse_error',
    message: '`if` keyword is required before rule body',
    location: { file: 'x.rego', row: 2, col: 7 },
  });
});

test('parse errors carry file, row and column', () => {
  assert.deepEqual(parseError(() => parseModule('bad.rego', 'package x\n\np := [1, 2\n')), {
    code: 'rego_parse_error',
    message: 'unexpected eof token: expected ]',
    location: { file: 'bad.rego', row: 4, col: 1 },
  });
  assert.equal(parseError(() => parseModule('s.rego', 'package x\np := "abc\n')).message, 'non-terminated string');
  assert.equal(parseError(() => parseModule('m.rego', 'allow { true }')).message, 'package expected');
});

test('comprehension versus union: a comprehension head is a primary term', () => {
  const [e] = parseQuery('x := [a | b]');
  assert.equal(((e!.terms as { type: string; value: unknown }[])[2] as { type: string }).type, 'arraycomprehension');
  const [f] = parseQuery('x := [a & b | c, 1]');
  assert.equal(((f!.terms as { type: string }[])[2] as { type: string }).type, 'array');
});

test('terms: sets, set(), raw strings, big numbers stay text', () => {
  assert.deepEqual(parseTerm('set()'), { type: 'set', value: [], location: { file: 'term', row: 1, col: 1 } });
  assert.equal(parseTerm('`a\\b`').value, 'a\\b');
  assert.equal(parseTerm('123456789012345678901234567890').value, '123456789012345678901234567890');
});
