/** Run the real kubectl (the /usr/bin/kubectl dispatcher unless a versioned binary is named). */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface KubectlRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface KubectlOptions {
  readonly kubeconfig: string;
  readonly input?: string;
  /** A versioned binary (`kubectl.1.27`) beside the dispatcher, or a path; default `kubectl`. */
  readonly binary?: string;
  readonly timeoutMs?: number;
}

/** Each run gets a fresh HOME, so discovery is never served from another test's cache. */
export function kubectl(args: readonly string[], options: KubectlOptions): Promise<KubectlRun> {
  return new Promise((resolve, reject) => {
    const home = mkdtempSync(path.join(tmpdir(), 'kubectl-home-'));
    const child = spawn(options.binary ?? 'kubectl', [...args], {
      env: { ...process.env, KUBECONFIG: options.kubeconfig, HOME: home },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** Like `kubectl` but rejects unless it exits 0; resolves with stdout. */
export async function kubectlOk(args: readonly string[], options: KubectlOptions): Promise<string> {
  const run = await kubectl(args, options);
  if (run.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${run.code}\n${run.stderr}`);
  return run.stdout;
}
