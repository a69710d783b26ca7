// The compiler's named passes, each run alone on a prepared state, and their errors with OPA's codes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildIndexes,
  buildRuleTree,
  checkRecursion,
  checkStrict,
  checkTypes,
  collectRules,
  lowerRules,
  type CompileState,
} from '../../src/rego/compiler/compile.js';
import { newNode } from '../../src/rego/compiler/program.js';
import { parseModule } from '../../src/rego/syntax/parser.js';

function state(...sources: string[]): CompileState {
  const modules = new Map(sources.map((text, i) => [`m${i}.rego`, parseModule(`m${i}.rego`, text)] as const));
  return { modules, options: {}, errors: [], rules: [], program: { root: newNode([]), ruleSets: new Map() } };
}

function upTo(s: CompileState, ...passes: Array<(s: CompileState) => void>): CompileState {
  for (const p of passes) p(s);
  return s;
}

test('collectRules: kind and ground path of every rule form', () => {
  const s = upTo(
    state(`package a.b
c := 1
s contains 1
o[k] := 2 if some k in ["x"]
r.q[k].z := 3 if some k in ["y"]
f(x) := x
`),
    collectRules,
  );
  assert.deepEqual(
    s.rules.map((r) => [r.kind, r.path.join('.'), r.keyTerms.length]),
    [
      ['complete', 'a.b.c', 0],
      ['set', 'a.b.s', 0],
      ['object', 'a.b.o', 1],
      ['object', 'a.b.r.q', 2],
      ['function', 'a.b.f', 0],
    ],
  );
});

test('buildRuleTree: rules of different kinds at one path conflict (rego_type_error)', () => {
  const s = upTo(state('package x\np := 1\np contains 2\n'), collectRules, buildRuleTree);
  assert.deepEqual(
    s.errors.map((e) => [e.code, e.text]),
    [['rego_type_error', 'conflicting rules data.x.p found']],
  );
});

test('lowerRules: unsafe variables are reported with their names (rego_unsafe_var_error)', () => {
  const s = upTo(state('package x\np contains y if { x > 1 }\n'), collectRules, buildRuleTree, lowerRules);
  assert.deepEqual(
    s.errors.map((e) => [e.code, e.text, e.location?.row]).sort(),
    [
      ['rego_unsafe_var_error', 'var x is unsafe', 2],
      ['rego_unsafe_var_error', 'var y is unsafe', 2],
    ],
  );
});

test('lowerRules: expressions are reordered so variables are bound before use', () => {
  const s = upTo(state('package x\np := y if { y > 1; y := 2 }\n'), collectRules, buildRuleTree, lowerRules);
  assert.deepEqual(s.errors, []);
  const rule = s.program.ruleSets.get('data.x.p')!.rules[0]!;
  assert.deepEqual(
    rule.body.map((e) => e.lit.k),
    ['unify', 'call'],
  );
});

test('lowerRules: := twice and calls to unknown functions are compile errors', () => {
  const s = upTo(state('package x\np if { a := 1; a := 2; nope(a) }\n'), collectRules, buildRuleTree, lowerRules);
  assert.deepEqual(
    s.errors.map((e) => [e.code, e.text]),
    [
      ['rego_compile_error', 'var a assigned above'],
      ['rego_type_error', 'undefined function nope'],
    ],
  );
});

test('checkRecursion: a cycle through two rules is rego_recursion_error', () => {
  const s = upTo(state('package x\np if q\nq if p\n'), collectRules, buildRuleTree, lowerRules, checkRecursion);
  assert.equal(s.errors.length, 1);
  assert.equal(s.errors[0]!.code, 'rego_recursion_error');
  assert.match(s.errors[0]!.text, /^rule data\.x\.(p|q) is recursive: /);
});

test('buildIndexes: rules testing the same input ref are indexed by its value', () => {
  const s = upTo(
    state(`package x
allow if input.method == "GET"
allow if input.method == "POST"
allow if input.user == "admin"
`),
    collectRules,
    buildRuleTree,
    lowerRules,
    buildIndexes,
  );
  const index = s.program.ruleSets.get('data.x.allow')!.index!;
  assert.equal(index.root, 'input');
  assert.deepEqual(index.path, ['method']);
  assert.equal(index.always.length, 1);
  assert.deepEqual([...index.byValue.values()].map((rules) => rules.length), [2, 2]);
});

test('checkTypes: a builtin argument of the wrong kind known at compile time is rego_type_error', () => {
  const s = upTo(state('package x\nn := count(1)\nm := count(input.xs)\n'), collectRules, buildRuleTree, lowerRules, checkTypes);
  assert.deepEqual(
    s.errors.map((e) => [e.code, e.text, e.location?.row]),
    [['rego_type_error', 'count: invalid argument(s)\n\thave: (number)\n\twant: (any<array[any], object[any: any], set[any], string>)', 2]],
  );
});

test('checkStrict: unused imports and unused assignments, only in strict mode', () => {
  const source = 'package x\nimport data.lib\nimport data.used\np if { a := 1; b := used.v; b > 0 }\n';
  const strict = state(source);
  strict.options.strict = true;
  checkStrict(strict);
  assert.deepEqual(
    strict.errors.map((e) => [e.code, e.text, e.location?.row]),
    [
      ['rego_compile_error', 'import data.lib unused', 2],
      ['rego_compile_error', 'assigned var a unused', 4],
    ],
  );
  const lax = state(source);
  checkStrict(lax);
  assert.deepEqual(lax.errors, []);
});
