import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { runCli, spawnCli, waitForOutput } from '../helpers/cli.js';
import { services } from '../../src/cli/services.js';

const portFlags = services.flatMap((s) => (s.up?.defaultPort === undefined ? [] : [`--${s.name}-port`, '0']));

test('up starts every registered service, prints where it is and what to use, and stops on SIGTERM', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'up-'));
  const child = spawnCli(['up', '--data-dir', dir, ...portFlags]);
  try {
    const out = await waitForOutput(child, /Press Ctrl-C to stop\./, 120_000);
    assert.match(out, new RegExp(`Data directory: ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    for (const service of services.filter((s) => s.up)) {
      assert.match(out, new RegExp(`^${service.name}\\b`, 'm'), `${service.name} not reported`);
    }
    // Every credential file printed exists.
    for (const [, file] of out.matchAll(/^  [^:]+: (\/\S+)$/gm)) {
      if (file!.startsWith(dir)) await readFile(file!);
    }
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    assert.equal(code, 0);
  } finally {
    child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
});

test('up refuses a data directory that is a file, in one line, and leaves it alone', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'up-'));
  const file = path.join(dir, 'not-a-dir');
  await writeFile(file, 'keep me');
  try {
    const { code, stderr } = await runCli(['up', '--data-dir', file, ...portFlags]);
    assert.equal(code, 1);
    assert.equal(stderr.trim(), `portcullis: data directory ${file}: not a directory`);
    assert.equal(await readFile(file, 'utf8'), 'keep me');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
