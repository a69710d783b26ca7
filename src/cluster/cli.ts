/**
 * `portcullis cluster serve` (kube-apiserver's flag names), `portcullis cluster kubeconfig`, and the
 * cluster's part in `portcullis up`. The ServiceModule listed in src/cli/services.ts is checked
 * there structurally (the dependency rule keeps src/cluster from importing src/cli).
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { StartupError, UsageError } from '../common/errors.js';
import { closeOnSignal, formatHostPort } from '../common/http.js';
import { createLogger, type Logger } from '../common/log.js';
import { readPemFile, type CertificatePair } from '../common/tls.js';
import { openStorage } from '../storage/index.js';
import type { Storage } from '../storage/types.js';
import { ServiceAccountTokenIssuer } from './authn/index.js';
import { kubeconfig, type KubeconfigCredentials } from './kubeconfig.js';
import { AesGcmTransformer } from './registry/encryption.js';
import { ADMIN_USER, adminCertificate, clusterCa, pkiDir, servingCertificate } from './pki.js';
import { startClusterServer, type ClusterServer } from './server.js';

export interface ServeOptions {
  readonly bindAddress: string;
  readonly securePort: number;
  readonly dataDir: string;
  readonly tlsCertFile?: string;
  readonly tlsPrivateKeyFile?: string;
  readonly clientCaFile?: string;
  readonly tokenAuthFile?: string;
  readonly basicAuthFile?: string;
  readonly anonymousAuth: boolean;
  readonly authorizationMode: readonly string[];
  /** `--etcd-servers`: when set, state lives in etcd (several servers may share it); otherwise SQLite under the data directory. */
  readonly etcdServers?: readonly string[];
  readonly etcdPrefix?: string;
  readonly serviceAccountIssuer?: string;
}

export interface RunningCluster {
  readonly server: ClusterServer;
  readonly url: string;
  readonly caFile: string;
  close(): Promise<void>;
}

/** Start a cluster API server from serve options: PKI, storage, authentication files, listener. */
export async function serveCluster(options: ServeOptions, logger: Logger): Promise<RunningCluster> {
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  const ca = await clusterCa(options.dataDir);
  let serving: CertificatePair;
  if (options.tlsCertFile || options.tlsPrivateKeyFile) {
    if (!options.tlsCertFile || !options.tlsPrivateKeyFile) throw new UsageError('--tls-cert-file and --tls-private-key-file go together');
    serving = { cert: await readPemFile(options.tlsCertFile, 'CERTIFICATE'), key: await readPemFile(options.tlsPrivateKeyFile, 'PRIVATE KEY') };
  } else {
    serving = await servingCertificate(options.dataDir, ca, [options.bindAddress]);
  }
  // Client certificates signed by the cluster CA (the admin kubeconfig) are always accepted,
  // beside those of --client-ca-file.
  const clientCa = options.clientCaFile ? `${await readPemFile(options.clientCaFile, 'CERTIFICATE')}\n${ca.cert}` : ca.cert;
  if (options.basicAuthFile) logger.warn('--basic-auth-file is deprecated: static password files were removed from Kubernetes in 1.19; prefer --token-auth-file or client certificates');
  const storage = await openClusterStorage(options);
  let server: ClusterServer;
  try {
    server = await startClusterServer(
      {
        storage,
        logger,
        tls: { cert: serving.cert, key: serving.key, clientCa },
        authentication: {
          ...(options.tokenAuthFile ? { tokenAuthFile: options.tokenAuthFile } : {}),
          ...(options.basicAuthFile ? { basicAuthFile: options.basicAuthFile } : {}),
          clientCa,
          anonymous: options.anonymousAuth,
        },
        authorizationModes: options.authorizationMode,
        tokenIssuer: await ServiceAccountTokenIssuer.open(options.dataDir, options.serviceAccountIssuer ? { issuer: options.serviceAccountIssuer } : {}),
        encryption: await AesGcmTransformer.open(options.dataDir),
      },
      { host: options.bindAddress, port: options.securePort },
    );
  } catch (error) {
    await storage.close();
    throw error;
  }
  return {
    server,
    url: server.url,
    caFile: path.join(pkiDir(options.dataDir), 'ca.crt'),
    async close() {
      await server.close();
      await storage.close();
    },
  };
}

async function openClusterStorage(options: ServeOptions): Promise<Storage> {
  if (options.etcdServers?.length) {
    const endpoints = options.etcdServers.map((s) => s.replace(/^https?:\/\//, '').replace(/\/$/, ''));
    const prefix = options.etcdPrefix ?? '/portcullis/cluster/';
    try {
      return await openStorage(`etcd://${endpoints.join(',')}?prefix=${encodeURIComponent(prefix)}`);
    } catch (error) {
      throw new StartupError(`--etcd-servers: ${(error as Error).message}`, { cause: error });
    }
  }
  try {
    return await openStorage(`sqlite:${path.join(options.dataDir, 'cluster.db')}`);
  } catch (error) {
    throw new StartupError(`--data-dir ${options.dataDir}: ${(error as Error).message}`, { cause: error });
  }
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new InvalidArgumentError('want a port number from 0 to 65535');
  return port;
}

function parseBool(value: string): boolean {
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new InvalidArgumentError('want true or false');
}

const DEFAULT_AUTHORIZATION_MODES = ['Node', 'RBAC'];

/** Comma-separated values; a repeated flag adds to the list. */
const list = (value: string, previous: string[] = []) => [...previous, ...value.split(',').map((s) => s.trim()).filter(Boolean)];

function serveCommand(): Command {
  return new Command('serve')
    .description('Run the cluster API server (kube-apiserver flags): TLS, authentication, RBAC, and REST storage in SQLite or etcd.')
    .option('--bind-address <ip>', 'address to listen on', '127.0.0.1')
    .addOption(new Option('--secure-port <port>', 'HTTPS port').default(6443).argParser(parsePort))
    .option('--data-dir <dir>', 'certificates, service-account key and (without --etcd-servers) the SQLite state', './.portcullis/cluster')
    .option('--tls-cert-file <file>', 'serving certificate (PEM); generated under the data directory when absent')
    .option('--tls-private-key-file <file>', 'key of --tls-cert-file (PEM)')
    .option('--client-ca-file <file>', 'CA bundle for client certificates (CN = user, O = groups); the cluster CA is always trusted too')
    .option('--token-auth-file <file>', 'static tokens: token,user,uid,"group1,group2"')
    .option('--basic-auth-file <file>', 'static passwords: password,user,uid,"group1,group2" (deprecated since Kubernetes 1.19)')
    .addOption(new Option('--anonymous-auth <bool>', 'treat requests without credentials as system:anonymous').default(true).argParser(parseBool))
    .addOption(new Option('--authorization-mode <modes>', 'ordered list of Node, RBAC, AlwaysAllow, AlwaysDeny (default: Node,RBAC)').argParser(list))
    .addOption(new Option('--etcd-servers <urls>', 'etcd endpoints (http://host:port, comma-separated); several servers may share them').argParser(list))
    .option('--etcd-prefix <prefix>', 'key prefix in etcd', '/portcullis/cluster/')
    .option('--service-account-issuer <url>', 'iss of service-account tokens')
    .option('--log-level <level>', 'trace, debug, info, warn, error or silent', 'info')
    .action(async (flags: Record<string, unknown>) => {
      const logger = createLogger({ level: String(flags.logLevel), name: 'cluster' });
      const running = await serveCluster(
        {
          bindAddress: String(flags.bindAddress),
          securePort: flags.securePort as number,
          dataDir: path.resolve(String(flags.dataDir)),
          ...(flags.tlsCertFile ? { tlsCertFile: String(flags.tlsCertFile) } : {}),
          ...(flags.tlsPrivateKeyFile ? { tlsPrivateKeyFile: String(flags.tlsPrivateKeyFile) } : {}),
          ...(flags.clientCaFile ? { clientCaFile: String(flags.clientCaFile) } : {}),
          ...(flags.tokenAuthFile ? { tokenAuthFile: String(flags.tokenAuthFile) } : {}),
          ...(flags.basicAuthFile ? { basicAuthFile: String(flags.basicAuthFile) } : {}),
          anonymousAuth: flags.anonymousAuth as boolean,
          authorizationMode: (flags.authorizationMode as string[] | undefined) ?? DEFAULT_AUTHORIZATION_MODES,
          ...(flags.etcdServers ? { etcdServers: flags.etcdServers as string[] } : {}),
          etcdPrefix: String(flags.etcdPrefix),
          ...(flags.serviceAccountIssuer ? { serviceAccountIssuer: String(flags.serviceAccountIssuer) } : {}),
        },
        logger,
      );
      closeOnSignal(() => running.close());
      process.stdout.write(`cluster API server listening on ${running.url}\nCA: ${running.caFile}\n`);
    });
}

function kubeconfigCommand(): Command {
  return new Command('kubeconfig')
    .description('Print a kubeconfig for the server whose certificates are in --data-dir: the admin (client certificate in system:masters) or a token/password user.')
    .option('--data-dir <dir>', 'the server\'s data directory', './.portcullis/cluster')
    .option('--server <url>', 'server URL', 'https://127.0.0.1:6443')
    .option('--user <name>', 'admin, or the user name for --token / --username', 'admin')
    .option('--token <token>', 'bearer token of --user')
    .option('--username <name>', 'basic-auth user name')
    .option('--password <password>', 'basic-auth password')
    .action(async (flags: Record<string, string | undefined>) => {
      process.stdout.write(await kubeconfigFor({ dataDir: path.resolve(flags.dataDir!), server: flags.server!, user: flags.user!, ...pick(flags, 'token', 'username', 'password') }));
    });
}

function pick(flags: Record<string, string | undefined>, ...keys: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of keys) if (flags[k] !== undefined) out[k] = flags[k]!;
  return out;
}

/** The text of `portcullis cluster kubeconfig`. */
export async function kubeconfigFor(options: { dataDir: string; server: string; user: string; token?: string; username?: string; password?: string }): Promise<string> {
  if (!existsSync(path.join(pkiDir(options.dataDir), 'ca.crt'))) {
    throw new StartupError(`${options.dataDir}: no cluster CA (pki/ca.crt); start the server with --data-dir ${options.dataDir} first`);
  }
  const ca = await clusterCa(options.dataDir);
  let credentials: KubeconfigCredentials;
  let user = options.user;
  if (options.token !== undefined) {
    credentials = { kind: 'token', token: options.token };
  } else if (options.username !== undefined || options.password !== undefined) {
    if (!options.username || options.password === undefined) throw new UsageError('--username and --password go together');
    credentials = { kind: 'basic', username: options.username, password: options.password };
  } else if (options.user === 'admin') {
    const pair = await adminCertificate(ca);
    credentials = { kind: 'certificate', cert: pair.cert, key: pair.key };
    user = ADMIN_USER;
  } else {
    throw new UsageError(`--user ${options.user}: give --token, or --username and --password (only the admin gets a certificate)`);
  }
  return kubeconfig({ server: options.server, ca: ca.cert, user, credentials });
}

export const clusterService = {
  name: 'cluster',
  summary: 'the cluster API server: the Kubernetes API with authentication and RBAC',
  command(): Command {
    return new Command('cluster')
      .description('A Kubernetes-compatible API server: kubectl and client-node work against it.')
      .addCommand(serveCommand())
      .addCommand(kubeconfigCommand());
  },
  up: {
    defaultPort: 6443,
    /** The API server on loopback with SQLite under <dataDir>/cluster and an admin kubeconfig at <dataDir>/admin.kubeconfig. */
    async start(context: { dataDir: string; host: string; port: number; logger: Logger }) {
      const dataDir = path.join(context.dataDir, 'cluster');
      const running = await serveCluster(
        { bindAddress: context.host, securePort: context.port, dataDir, anonymousAuth: true, authorizationMode: DEFAULT_AUTHORIZATION_MODES },
        context.logger,
      );
      const file = path.join(context.dataDir, 'admin.kubeconfig');
      await writeFile(file, await kubeconfigFor({ dataDir, server: `https://${formatHostPort(context.host, running.server.port)}`, user: 'admin' }), { mode: 0o600 });
      return {
        name: 'cluster',
        url: running.url,
        credentials: [
          { label: 'admin kubeconfig', value: file },
          { label: 'try', value: `kubectl --kubeconfig ${file} get namespaces` },
        ],
        details: { caFile: running.caFile, kubeconfig: file },
        close: () => running.close(),
      };
    },
  },
};
