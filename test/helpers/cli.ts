/**
 * Run the `portcullis` command from the TypeScript sources (no build step), as a user would run
 * `npx portcullis …`.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import path from 'node:path';

export const ENTRY = path.resolve('src/cli/entry.ts');

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Run to completion (bounded by `timeoutMs`, after which the process is killed and the promise rejects). */
export function runCli(args: readonly string[], options: { input?: string; env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawnCli(args, { env: options.env, cwd: options.cwd });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk) => (stdout += chunk));
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`portcullis ${args.join(' ')}: no exit within ${options.timeoutMs ?? 60_000} ms\n${stdout}\n${stderr}`));
    }, options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin!.end(options.input ?? '');
  });
}

/** Start a long-running command (a server); the caller stops it. */
export function spawnCli(args: readonly string[], options: SpawnOptions = {}): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', ENTRY, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    ...options,
    env: { ...process.env, ...(options.env ?? {}) },
  });
}

/** Resolve with everything printed once `pattern` appears on stdout; reject if the process exits first or on timeout. */
export function waitForOutput(child: ChildProcess, pattern: RegExp, timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => done(new Error(`no ${pattern} within ${timeoutMs} ms\nstdout: ${out}\nstderr: ${err}`)), timeoutMs);
    const onOut = (chunk: Buffer) => {
      out += chunk;
      if (pattern.test(out)) done();
    };
    const onErr = (chunk: Buffer) => (err += chunk);
    const onExit = (code: number | null) => done(new Error(`exited with ${code} before ${pattern}\nstdout: ${out}\nstderr: ${err}`));
    function done(error?: Error) {
      clearTimeout(timer);
      child.stdout!.off('data', onOut);
      child.stderr!.off('data', onErr);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve(out);
    }
    child.stdout!.on('data', onOut);
    child.stderr!.on('data', onErr);
    child.on('exit', onExit);
  });
}
