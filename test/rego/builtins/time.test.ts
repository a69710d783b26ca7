import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fails, json, parseJSON } from './call.js';

const ns = parseJSON('1703444325734390000'); // 2023-12-24T18:58:45.73439Z, a Sunday

test('calendar fields in UTC and in named zones', () => {
  assert.equal(json('time.date', ns), '[2023,12,24]');
  assert.equal(json('time.clock', ns), '[18,58,45]');
  assert.equal(json('time.clock', [ns, 'Asia/Kolkata']), '[0,28,45]');
  assert.equal(json('time.date', [ns, 'America/New_York']), '[2023,12,24]');
  assert.equal(json('time.weekday', [ns, 'Asia/Tokyo']), '"Monday"');
  assert.equal(json('time.weekday', ns), '"Sunday"');
  fails('time.clock', [[ns, 'Mars/Olympus']], 'eval_builtin_error', 'time.clock: unknown time zone Mars/Olympus');
  fails('time.weekday', [[]], 'eval_type_error', 'time.weekday: operand 1 must be either number (ns) or [number (ns), string (tz)] but got array');
});

test('formatting and parsing with Go layouts', () => {
  assert.equal(json('time.format', ns), '"2023-12-24T18:58:45.73439Z"');
  assert.equal(json('time.format', [ns, 'Asia/Kolkata', 'RFC1123Z']), '"Mon, 25 Dec 2023 00:28:45 +0530"');
  assert.equal(json('time.format', [ns, 'UTC', 'Monday, 02-Jan-06 3:04PM .000']), '"Sunday, 24-Dec-23 6:58PM .734"');
  assert.equal(json('time.parse_rfc3339_ns', '1985-04-12T23:20:50.52Z'), '482196050520000000');
  assert.equal(json('time.parse_rfc3339_ns', '1996-12-19T16:39:57-08:00'), '851042397000000000');
  assert.equal(json('time.parse_ns', '2006-01-02', '2020-03-01'), '1583020800000000000');
  assert.equal(json('time.parse_ns', 'Jan _2 15:04:05 2006', 'Mar  1 10:00:00 2020'), '1583056800000000000');
  fails('time.parse_ns', ['2006-01-02', '2020/03/01'], 'eval_builtin_error',
    'time.parse_ns: parsing time "2020/03/01" as "2006-01-02": cannot parse "/03/01" as "-"');
});

test('durations, date arithmetic and differences', () => {
  assert.equal(json('time.parse_duration_ns', '1h30m'), '5400000000000');
  assert.equal(json('time.parse_duration_ns', '-1.5s'), '-1500000000');
  assert.equal(json('time.parse_duration_ns', '1d2h'), '93600000000000');
  assert.equal(json('time.parse_duration_ns', '1µs'), '1000');
  fails('time.parse_duration_ns', ['1d2x'], 'eval_builtin_error', 'time.parse_duration_ns: time: unknown unit "x" in duration "1d2x"');
  fails('time.parse_duration_ns', ['1'], 'eval_builtin_error', 'time.parse_duration_ns: time: missing unit in duration "1"');
  fails('time.parse_duration_ns', [''], 'eval_builtin_error', 'time.parse_duration_ns: time: invalid duration ""');
  fails('time.parse_duration_ns', ['10000000000000000000h'], 'eval_builtin_error', 'time.parse_duration_ns: time: invalid duration "10000000000000000000h"');
  assert.equal(json('time.add_date', ns, 0, 1, 10), '1706986725734390000');
  assert.equal(json('time.add_date', parseJSON('1580428800000000000'), 0, 1, 0), '1583107200000000000'); // Jan 31 + 1 month = Mar 2 (2020)
  assert.equal(json('time.diff', ns, parseJSON('1257894000000000000')), '[14,1,13,19,58,45]');
});
