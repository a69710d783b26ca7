/**
 * What the benchmarks share: command-line numbers, the autocannon load generator, and starting a
 * server under test in its own process (the bench file itself, run again as `--serve KIND`, prints
 * one line — its URL and whatever else the bench needs — once it serves).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
}

export type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>;

export const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

/** `--name N` from the command line, or `fallback`. */
export function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
}

/**
 * Run `benchFile` (pass `import.meta.url`) again as `--serve kind` and resolve with the words of
 * the first line it prints; rejects if it exits first.
 */
export function startServer(benchFile: string, kind: string, options: { env?: Record<string, string>; stdin?: 'pipe' | 'ignore' } = {}): Promise<{ child: ChildProcess; words: string[] }> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(benchFile), '--serve', kind], {
    stdio: [options.stdin ?? 'ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...options.env },
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      const newline = out.indexOf('\n');
      if (newline >= 0) resolve({ child, words: out.slice(0, newline).trim().split(/\s+/) });
    });
    child.once('exit', (code) => reject(new Error(`${kind} server exited with ${code}`)));
  });
}
