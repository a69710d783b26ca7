/**
 * A real OpenLDAP `slapd` for tests: a throw-away slapd.conf and MDB database in a temporary
 * directory, a seeded directory, a random loopback port, and (optionally) StartTLS with a
 * certificate from a fresh test CA. `stop()` kills the daemon and removes the directory.
 *
 * The seeded directory (suffix `dc=example,dc=org`):
 *
 *   ou=people    uid=alice (password `alice-pw`), uid=bob (`bob-pw`), uid=carol (`carol-pw`)
 *   ou=groups    cn=engineers  groupOfNames        member: alice, bob
 *                cn=admins     groupOfUniqueNames  uniqueMember: bob
 *                cn=ops        posixGroup          memberUid: alice
 *   ou=services  cn=search     the bind DN for search-then-bind (`search-pw`), may read everything
 *
 * Anonymous clients may bind and search (like many directories); user passwords are readable by
 * nobody except the rootdn, and usable only to bind.
 *
 * slapd is Debian's `slapd` package (`.ci/run` installs it); `slapdAvailable()` says whether the
 * binary is here so that a suite can skip with that reason rather than fail obscurely.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CertificateAuthority } from '../../../src/common/tls.js';

const SLAPD = process.env.SLAPD_PATH ?? '/usr/sbin/slapd';
const SLAPADD = process.env.SLAPADD_PATH ?? '/usr/sbin/slapadd';
const SCHEMA_DIR = '/etc/ldap/schema';
const MODULE_DIR = '/usr/lib/ldap';

export const SUFFIX = 'dc=example,dc=org';
export const PEOPLE_DN = `ou=people,${SUFFIX}`;
export const GROUPS_DN = `ou=groups,${SUFFIX}`;
export const SEARCH_BIND_DN = `cn=search,ou=services,${SUFFIX}`;
export const SEARCH_BIND_PASSWORD = 'search-pw';
const ROOT_DN = `cn=admin,${SUFFIX}`;
const ROOT_PASSWORD = 'admin-pw';

export interface SeedUser {
  readonly uid: string;
  readonly password: string;
  readonly dn: string;
  /** Groups the user is in, by `cn`. */
  readonly groups: readonly string[];
}

export const USERS: Readonly<Record<'alice' | 'bob' | 'carol', SeedUser>> = {
  alice: { uid: 'alice', password: 'alice-pw', dn: `uid=alice,${PEOPLE_DN}`, groups: ['engineers', 'ops'] },
  bob: { uid: 'bob', password: 'bob-pw', dn: `uid=bob,${PEOPLE_DN}`, groups: ['admins', 'engineers'] },
  carol: { uid: 'carol', password: 'carol-pw', dn: `uid=carol,${PEOPLE_DN}`, groups: [] },
};

export interface SlapdOptions {
  /** Offer StartTLS with a server certificate for 127.0.0.1 and localhost. */
  readonly tls?: boolean;
}

export interface Slapd {
  /** `ldap://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** PEM of the CA that signed the server certificate (when `tls`). */
  readonly caCert?: string;
  stop(): Promise<void>;
}

export function slapdAvailable(): boolean {
  return existsSync(SLAPD) && existsSync(SLAPADD) && existsSync(path.join(SCHEMA_DIR, 'core.schema'));
}

export async function startSlapd(options: SlapdOptions = {}): Promise<Slapd> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'portcullis-slapd-'));
  try {
    let caCert: string | undefined;
    let tlsLines: string[] = [];
    if (options.tls) {
      const ca = await CertificateAuthority.create('slapd test CA');
      const server = await ca.issueServer({ commonName: '127.0.0.1', hosts: ['127.0.0.1', 'localhost'] });
      await writeFile(path.join(dir, 'ca.crt'), ca.cert);
      await writeFile(path.join(dir, 'server.crt'), server.cert);
      await writeFile(path.join(dir, 'server.key'), server.key, { mode: 0o600 });
      caCert = ca.cert;
      tlsLines = [
        `TLSCACertificateFile ${path.join(dir, 'ca.crt')}`,
        `TLSCertificateFile ${path.join(dir, 'server.crt')}`,
        `TLSCertificateKeyFile ${path.join(dir, 'server.key')}`,
      ];
    }
    const conf = path.join(dir, 'slapd.conf');
    await mkdir(path.join(dir, 'db'));
    await writeFile(conf, slapdConf(dir, tlsLines));
    await writeFile(path.join(dir, 'seed.ldif'), seedLdif());
    await run(SLAPADD, ['-q', '-f', conf, '-l', path.join(dir, 'seed.ldif')]);

    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const url = `ldap://127.0.0.1:${port}`;
      const child = spawn(SLAPD, ['-d', '0', '-f', conf, '-h', `${url}/`], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      const ready = await waitForPort(port, () => child.exitCode !== null || child.signalCode !== null);
      if (ready) {
        return {
          url,
          port,
          caCert,
          stop: async () => {
            await stopChild(child, exited);
            await rm(dir, { recursive: true, force: true });
          },
        };
      }
      await stopChild(child, exited);
      // Lost the race for the port to someone else (or slapd refused to start): retry a few times.
      if (attempt >= 3) throw new Error(`slapd did not start: ${stderr.trim().split('\n').slice(-3).join(' | ')}`);
    }
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

function slapdConf(dir: string, tlsLines: string[]): string {
  return [
    ...['core', 'cosine', 'nis', 'inetorgperson'].map((s) => `include ${SCHEMA_DIR}/${s}.schema`),
    `pidfile ${path.join(dir, 'slapd.pid')}`,
    `argsfile ${path.join(dir, 'slapd.args')}`,
    `modulepath ${MODULE_DIR}`,
    'moduleload back_mdb',
    'loglevel 0',
    ...tlsLines,
    'database mdb',
    'maxsize 10485760',
    `suffix "${SUFFIX}"`,
    `rootdn "${ROOT_DN}"`,
    `rootpw ${ROOT_PASSWORD}`,
    `directory ${path.join(dir, 'db')}`,
    'index objectClass eq',
    'access to attrs=userPassword by anonymous auth by * none',
    'access to * by * read',
    '',
  ].join('\n');
}

function seedLdif(): string {
  const entries: string[][] = [
    [`dn: ${SUFFIX}`, 'objectClass: dcObject', 'objectClass: organization', 'dc: example', 'o: Example'],
    [`dn: ${PEOPLE_DN}`, 'objectClass: organizationalUnit', 'ou: people'],
    [`dn: ${GROUPS_DN}`, 'objectClass: organizationalUnit', 'ou: groups'],
    [`dn: ou=services,${SUFFIX}`, 'objectClass: organizationalUnit', 'ou: services'],
    [
      `dn: ${SEARCH_BIND_DN}`,
      'objectClass: organizationalRole',
      'objectClass: simpleSecurityObject',
      'cn: search',
      `userPassword: ${SEARCH_BIND_PASSWORD}`,
    ],
    ...Object.values(USERS).map((u) => [
      `dn: ${u.dn}`,
      'objectClass: inetOrgPerson',
      `uid: ${u.uid}`,
      `cn: ${u.uid}`,
      `sn: ${u.uid}`,
      `mail: ${u.uid}@example.org`,
      `userPassword: ${u.password}`,
    ]),
    [
      `dn: cn=engineers,${GROUPS_DN}`,
      'objectClass: groupOfNames',
      'cn: engineers',
      `member: ${USERS.alice.dn}`,
      `member: ${USERS.bob.dn}`,
    ],
    [`dn: cn=admins,${GROUPS_DN}`, 'objectClass: groupOfUniqueNames', 'cn: admins', `uniqueMember: ${USERS.bob.dn}`],
    [`dn: cn=ops,${GROUPS_DN}`, 'objectClass: posixGroup', 'cn: ops', 'gidNumber: 5000', 'memberUid: alice'],
  ];
  return entries.map((lines) => lines.join('\n')).join('\n\n') + '\n';
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${path.basename(command)} exited with ${code}: ${stderr.trim()}`)),
    );
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Poll until the port accepts connections (true), or until the daemon gave up or 10 s passed (false). */
async function waitForPort(port: number, gaveUp: () => boolean): Promise<boolean> {
  const deadline = Date.now() + 10_000;
  while (!gaveUp() && Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

async function stopChild(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}
