import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DurationError, formatDurationNs, formatDurationSeconds, parseDurationNs, parseDurationSeconds } from '../../src/common/duration.js';

test('parses Go durations, plain seconds and days', () => {
  const cases: Array<[string | number, number]> = [
    ['20m', 1200],
    ['768h', 2_764_800],
    ['1h30m', 5400],
    ['0s', 0],
    ['0', 0],
    ['3600', 3600],
    [3600, 3600],
    ['1.5h', 5400],
    ['2d', 172_800],
    ['90s', 90],
  ];
  for (const [input, seconds] of cases) assert.equal(parseDurationSeconds(input), seconds, String(input));
  assert.equal(parseDurationNs('300ms'), 300_000_000n);
  assert.equal(parseDurationNs('1µs'), 1000n);
});

test('rejects what is not a duration', () => {
  for (const bad of ['', 'm', '20x', '1h 30m', 'abc', '-']) {
    assert.throws(() => parseDurationNs(bad), DurationError, bad);
  }
});

test('prints as Go does', () => {
  assert.equal(formatDurationSeconds(1200), '20m0s');
  assert.equal(formatDurationSeconds(2_764_800), '768h0m0s');
  assert.equal(formatDurationSeconds(5400), '1h30m0s');
  assert.equal(formatDurationSeconds(0), '0s');
  assert.equal(formatDurationSeconds(59), '59s');
  assert.equal(formatDurationNs(1_500_000_000n), '1.5s');
  assert.equal(formatDurationNs(300_000_000n), '300ms');
});
