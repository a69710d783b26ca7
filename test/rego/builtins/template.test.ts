import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fails, json } from './call.js';

const render = (source: string, vars: object) => JSON.parse(json('strings.render_template', source, vars)) as string;

test('strings.render_template renders Go text/template over the variables', () => {
  assert.equal(render('Hello {{.name}}!', { name: 'world' }), 'Hello world!');
  assert.equal(render('{{.user.name}} is {{.user.age}}', { user: { name: 'ann', age: 42 } }), 'ann is 42');
  assert.equal(render('{{range $i, $v := .items}}{{$i}}={{$v}};{{end}}', { items: ['a', 'b'] }), '0=a;1=b;');
  assert.equal(render('{{range .items}}[{{.}}]{{else}}none{{end}}', { items: [] }), 'none');
  assert.equal(render('{{range $k, $v := .m}}{{$k}}:{{$v}} {{end}}', { m: { b: 2, a: 1 } }), 'a:1 b:2 ');
  assert.equal(render('{{if .admin}}admin{{else if .user}}user{{else}}anon{{end}}', { admin: false, user: true }), 'user');
  assert.equal(render('{{with .x}}x={{.}}{{end}}', { x: 5 }), 'x=5');
  assert.equal(render('{{- /* comment */ -}}\n  {{.a}}  {{- .b}}', { a: 1, b: 2 }), '12');
  assert.equal(render('{{if and .a (not .b)}}yes{{end}} {{len .list}} {{index .list 1}}', { a: true, b: false, list: [7, 8] }), 'yes 2 8');
  assert.equal(render('{{printf "%s=%v" .s .n}} {{.n | printf "%v"}}', { n: 3.14159, s: 'x' }), 'x=3.14159 3.14159');
  assert.equal(render('{{$x := .a}}{{$x}} {{.m}} {{.l}}', { a: 'v', m: { k: [1, 2] }, l: [true, null] }), 'v map[k:[1 2]] [true <nil>]');
  assert.equal(render('{{if eq .role "admin" "root"}}ok{{end}}{{if ne .role "root"}}!{{end}}', { role: 'root' }), 'ok');
});

test('template errors are builtin errors with Go wording', () => {
  fails('strings.render_template', ['{{.missing}}', {}], 'eval_builtin_error',
    'strings.render_template: template: template:1: executing "template" at <.missing>: map has no entry for key "missing"');
  fails('strings.render_template', ['{{nope .x}}', { x: 1 }], 'eval_builtin_error',
    'strings.render_template: template: template:1: function "nope" not defined');
  fails('strings.render_template', ['{{if .x}}', { x: 1 }], 'eval_builtin_error', 'strings.render_template: template: template: unexpected EOF');
});
