import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fails, json, set } from './call.js';

test('CIDR containment and intersection, IPv4 and IPv6', () => {
  assert.equal(json('net.cidr_contains', '10.0.0.0/8', '10.1.2.3'), 'true');
  assert.equal(json('net.cidr_contains', '10.0.0.0/8', '10.1.0.0/16'), 'true');
  assert.equal(json('net.cidr_contains', '10.0.0.0/16', '10.0.0.0/8'), 'false');
  assert.equal(json('net.cidr_contains', '2001:db8::/32', '2001:db8:1::1'), 'true');
  assert.equal(json('net.cidr_contains', '10.0.0.0/8', '::ffff:10.0.0.1'), 'true');
  assert.equal(json('net.cidr_intersects', '192.168.0.0/16', '192.168.1.0/24'), 'true');
  assert.equal(json('net.cidr_intersects', '192.168.0.0/24', '192.168.1.0/24'), 'false');
  assert.equal(json('net.cidr_is_valid', '10.0.0.0/33'), 'false');
  assert.equal(json('net.cidr_is_valid', '::/0'), 'true');
  fails('net.cidr_contains', ['10.0.0.0/8', 'nope'], 'eval_builtin_error', 'net.cidr_contains: not a valid textual representation of an IP address or CIDR: nope');
  fails('net.cidr_expand', ['192.168.1.1/33'], 'eval_builtin_error', 'net.cidr_expand: invalid CIDR address: 192.168.1.1/33');
});

test('matches, expansion and merging', () => {
  assert.equal(
    json('net.cidr_contains_matches', { a: '10.0.0.0/8', b: ['192.168.0.0/16', 'tag'] }, ['10.1.1.1', '192.168.3.4', '8.8.8.8']),
    '[["a",0],["b",1]]',
  );
  assert.equal(json('net.cidr_contains_matches', '10.0.0.0/8', set('10.0.0.1')), '[["10.0.0.0/8","10.0.0.1"]]');
  fails('net.cidr_contains_matches', [[[]], '1.1.1.1'], 'eval_builtin_error', 'net.cidr_contains_matches: operand 1: element must be string or non-empty array');
  assert.equal(json('net.cidr_expand', '192.168.1.2/31'), '["192.168.1.2","192.168.1.3"]');
  assert.equal(json('net.cidr_merge', ['192.168.1.0/25', '192.168.1.128/25', '10.0.0.1/32', '10.0.0.1/32']), '["10.0.0.1/32","192.168.1.0/24"]');
  assert.equal(json('net.cidr_merge', ['2601:600:8a80:207e:a57d:7567:e2c9:e7b3/64', '2601:600:8a80:207e::1/128']), '["2601:600:8a80:207e::/64"]');
  fails('net.cidr_merge', [['::1']], 'eval_builtin_error', 'net.cidr_merge: IPv6 invalid: needs prefix length');
});
