import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../helpers/cli.js';
import { services } from '../../src/cli/services.js';

test('--help lists every registered service and up', async () => {
  const { code, stdout } = await runCli(['--help']);
  assert.equal(code, 0);
  for (const name of [...services.map((s) => s.name), 'up']) {
    assert.match(stdout, new RegExp(`^  ${name}\\b`, 'm'), `${name} missing from --help`);
  }
});

test('an unknown command exits 2 with a one-line error', async () => {
  const { code, stdout, stderr } = await runCli(['nosuch']);
  assert.equal(code, 2);
  assert.equal(stdout, '');
  assert.equal(stderr.trim().split('\n').length, 1);
  assert.match(stderr, /unknown command 'nosuch'/);
});

test('an unknown flag exits 2 with a one-line error, at every level', async () => {
  for (const args of [['--nosuch'], ['up', '--nosuch'], ...services.map((s) => [s.name, '--nosuch'])]) {
    const { code, stderr } = await runCli(args);
    assert.equal(code, 2, args.join(' '));
    assert.equal(stderr.trim().split('\n').length, 1, `${args.join(' ')}: ${stderr}`);
    // A command with a required option may report that one first; either way it is one usage line.
    assert.match(stderr, /^error: (unknown option '--nosuch'|required option '.+' not specified)/, args.join(' '));
  }
  assert.match((await runCli(['up', '--nosuch'])).stderr, /^error: unknown option '--nosuch'/);
});

test('every subcommand has --help', async () => {
  for (const name of [...services.map((s) => s.name), 'up']) {
    const { code, stdout } = await runCli([name, '--help']);
    assert.equal(code, 0, name);
    assert.match(stdout, new RegExp(`^Usage: portcullis ${name}`, 'm'));
  }
});

test('no command prints help on stderr and exits 2', async () => {
  const { code, stderr } = await runCli([]);
  assert.equal(code, 2);
  assert.match(stderr, /^Usage: portcullis/m);
});
