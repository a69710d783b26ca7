/**
 * A real etcd for tests and benchmarks: started on 127.0.0.1 with free ports and a temporary data
 * directory, stopped (and its directory removed) by `stop()`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const ETCD_BINARY = process.env.ETCD_BINARY ?? '/usr/bin/etcd';

export interface EtcdServer {
  /** host:port of the client endpoint. */
  readonly endpoint: string;
  /** Stops etcd (SIGTERM) but keeps its data, as a crash or an upgrade would. */
  pause(): Promise<void>;
  /** Starts it again on the same address and data. */
  resume(): Promise<void>;
  /** Stops etcd and removes its data. */
  stop(): Promise<void>;
}

/** Why etcd cannot run here, or undefined when it can. */
export function etcdMissing(): string | undefined {
  return existsSync(ETCD_BINARY) ? undefined : `${ETCD_BINARY} is not installed (Debian: apt-get install etcd-server)`;
}

/** Starts etcd; tries again with other ports if one of them was taken in the meantime. */
export async function startEtcd(): Promise<EtcdServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnFreePorts();
    } catch (error) {
      if (attempt === 3 || !/address already in use/.test(String(error))) throw error;
    }
  }
}

async function startOnFreePorts(): Promise<EtcdServer> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'portcullis-etcd-'));
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const args = [
    '--name=test',
    `--data-dir=${dataDir}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=test=${peer}`,
    '--logger=zap',
    '--log-level=error',
  ];
  let child: ChildProcess | undefined;
  const launch = async (): Promise<void> => {
    let stderr = '';
    child = spawn(ETCD_BINARY, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    await waitHealthy(`${client}/health`, child, () => stderr);
  };
  const pause = async (): Promise<void> => {
    if (child) await terminate(child);
  };
  const stop = async (): Promise<void> => {
    await pause();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await launch();
  } catch (error) {
    await stop();
    throw error;
  }
  return { endpoint: `127.0.0.1:${clientPort}`, pause, resume: launch, stop };
}

async function waitHealthy(url: string, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`etcd exited with ${child.exitCode}: ${stderr()}`);
    try {
      const response = await fetch(url);
      if (response.ok && ((await response.json()) as { health?: string }).health === 'true') return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`etcd did not become healthy at ${url}: ${stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** A port that was free a moment ago (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
