/**
 * A real etcd for tests and benchmarks: started on 127.0.0.1 with free ports and a temporary data
 * directory, stopped (and its directory removed) by `stop()`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
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

/** PEM texts for an etcd that serves TLS and requires a client certificate signed by `ca`. */
export interface EtcdTls {
  readonly ca: string;
  readonly server: { readonly cert: string; readonly key: string };
  /** The certificate the health check presents. */
  readonly client: { readonly cert: string; readonly key: string };
}

/** Starts etcd; tries again with other ports if one of them was taken in the meantime. */
export async function startEtcd(options: { tls?: EtcdTls } = {}): Promise<EtcdServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnFreePorts(options.tls);
    } catch (error) {
      if (attempt === 3 || !/address already in use/.test(String(error))) throw error;
    }
  }
}

async function startOnFreePorts(tls: EtcdTls | undefined): Promise<EtcdServer> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'portcullis-etcd-'));
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const client = `${tls ? 'https' : 'http'}://127.0.0.1:${clientPort}`;
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
  if (tls) {
    const pki = path.join(dataDir, 'pki');
    mkdirSync(pki);
    const file = (name: string, pem: string): string => {
      writeFileSync(path.join(pki, name), pem, { mode: 0o600 });
      return path.join(pki, name);
    };
    args.push(
      `--trusted-ca-file=${file('ca.crt', tls.ca)}`,
      `--cert-file=${file('server.crt', tls.server.cert)}`,
      `--key-file=${file('server.key', tls.server.key)}`,
      '--client-cert-auth',
    );
  }
  let child: ChildProcess | undefined;
  const launch = async (): Promise<void> => {
    let stderr = '';
    child = spawn(ETCD_BINARY, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    await waitHealthy(`${client}/health`, tls, child, () => stderr);
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

async function waitHealthy(url: string, tls: EtcdTls | undefined, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`etcd exited with ${child.exitCode}: ${stderr()}`);
    try {
      if ((JSON.parse(await getText(url, tls)) as { health?: string }).health === 'true') return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`etcd did not become healthy at ${url}: ${stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function getText(url: string, tls: EtcdTls | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const options = tls ? { ca: tls.ca, cert: tls.client.cert, key: tls.client.key } : {};
    const request = (tls ? https : http).get(url, options, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => (response.statusCode === 200 ? resolve(body) : reject(new Error(`${response.statusCode}`))));
    });
    request.on('error', reject);
  });
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
