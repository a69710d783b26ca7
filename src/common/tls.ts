/**
 * TLS and PKI helpers: a certificate authority, server certificates with IP/DNS subject
 * alternative names, client certificates whose CN and O carry a user name and groups (the
 * Kubernetes convention), and PEM loading with errors that say which file is wrong.
 * Keys are ECDSA P-256: fast to make, accepted by Node, Go (kubectl) and curl.
 */
import { webcrypto, X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import 'reflect-metadata'; // @peculiar/x509's dependency injection needs it loaded first
import * as x509 from '@peculiar/x509';
import { StartupError } from './errors.js';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;

export interface CertificatePair {
  /** PEM-encoded certificate. */
  readonly cert: string;
  /** PEM-encoded PKCS#8 private key. */
  readonly key: string;
}

export interface ServerCertificateOptions {
  commonName: string;
  /** Host names and IP addresses the certificate is valid for (each goes to the right SAN type). */
  hosts: readonly string[];
  validDays?: number;
}

export interface ClientCertificateOptions {
  /** The user name (Kubernetes reads it from the subject CN). */
  commonName: string;
  /** Groups (Kubernetes reads them from the subject O entries). */
  organizations?: readonly string[];
  validDays?: number;
}

export class CertificateAuthority implements CertificatePair {
  private constructor(
    readonly cert: string,
    readonly key: string,
    private readonly certificate: x509.X509Certificate,
    private readonly privateKey: CryptoKey,
  ) {}

  static async create(commonName: string, validDays = 3650): Promise<CertificateAuthority> {
    const keys = await generateKeys();
    const now = Date.now();
    const certificate = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: randomSerial(),
      name: [{ CN: [commonName] }],
      notBefore: new Date(now - 60_000),
      notAfter: new Date(now + validDays * DAY_MS),
      signingAlgorithm: ALGORITHM,
      keys,
      extensions: [
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      ],
    });
    return new CertificateAuthority(certificate.toString('pem'), await exportKey(keys.privateKey), certificate, keys.privateKey);
  }

  static async load(certPem: string, keyPem: string): Promise<CertificateAuthority> {
    const certificate = new x509.X509Certificate(certPem);
    const der = createPrivateKey(keyPem).export({ format: 'der', type: 'pkcs8' });
    const privateKey = await webcrypto.subtle.importKey('pkcs8', der, { name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign']);
    return new CertificateAuthority(certPem, keyPem, certificate, privateKey as CryptoKey);
  }

  issueServer(options: ServerCertificateOptions): Promise<CertificatePair> {
    const names = options.hosts.map((host) =>
      isIP(host) ? { type: 'ip' as const, value: host } : { type: 'dns' as const, value: host },
    );
    return this.issue([{ CN: [options.commonName] }], options.validDays ?? 825, [
      new x509.SubjectAlternativeNameExtension(names),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
    ]);
  }

  issueClient(options: ClientCertificateOptions): Promise<CertificatePair> {
    const subject: x509.JsonName = [...(options.organizations ?? []).map((o) => ({ O: [o] })), { CN: [options.commonName] }];
    return this.issue(subject, options.validDays ?? 365, [
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]),
    ]);
  }

  private async issue(subject: x509.JsonName, validDays: number, extensions: x509.Extension[]): Promise<CertificatePair> {
    const keys = await generateKeys();
    const now = Date.now();
    const certificate = await x509.X509CertificateGenerator.create({
      serialNumber: randomSerial(),
      subject,
      issuer: this.certificate.subjectName,
      notBefore: new Date(now - 60_000),
      notAfter: new Date(now + validDays * DAY_MS),
      signingAlgorithm: ALGORITHM,
      publicKey: keys.publicKey,
      signingKey: this.privateKey,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
        await x509.AuthorityKeyIdentifierExtension.create(this.certificate, false),
        ...extensions,
      ],
    });
    return { cert: certificate.toString('pem'), key: await exportKey(keys.privateKey) };
  }
}

/**
 * Load `ca.crt`/`ca.key` from `dir`, or create and write them (key mode 0600) when both are
 * absent. One present without the other is an error: nothing is overwritten.
 */
export async function ensureCertificateAuthority(dir: string, commonName: string): Promise<CertificateAuthority> {
  const certPath = path.join(dir, 'ca.crt');
  const keyPath = path.join(dir, 'ca.key');
  const haveCert = existsSync(certPath);
  const haveKey = existsSync(keyPath);
  if (haveCert && haveKey) {
    const [cert, key] = await Promise.all([readPemFile(certPath, 'CERTIFICATE'), readPemFile(keyPath, 'PRIVATE KEY')]);
    try {
      return await CertificateAuthority.load(cert, key);
    } catch (error) {
      throw new StartupError(`${keyPath}: not a usable P-256 private key for ${certPath}`, { cause: error });
    }
  }
  if (haveCert || haveKey) {
    throw new StartupError(`${dir}: found ${haveCert ? 'ca.crt without ca.key' : 'ca.key without ca.crt'}; refusing to overwrite`);
  }
  const ca = await CertificateAuthority.create(commonName);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFile(certPath, ca.cert, { mode: 0o644 });
  await writeFile(keyPath, ca.key, { mode: 0o600 });
  return ca;
}

/** Read a PEM file and check that it holds a block of the expected kind; the error names the file. */
export async function readPemFile(file: string, kind: 'CERTIFICATE' | 'PRIVATE KEY'): Promise<string> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new StartupError(`${file}: cannot read (${(error as NodeJS.ErrnoException).code ?? 'error'})`, { cause: error });
  }
  const marker = kind === 'CERTIFICATE' ? /-----BEGIN CERTIFICATE-----/ : /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/;
  if (!marker.test(text)) throw new StartupError(`${file}: no PEM ${kind.toLowerCase()} found`);
  return text;
}

export interface CertificateInfo {
  readonly commonName?: string;
  readonly organizations: string[];
  readonly notBefore: Date;
  readonly notAfter: Date;
  readonly fingerprint256: string;
}

/** Subject CN and O entries and validity of a PEM or DER certificate. */
export function certificateInfo(cert: string | Buffer): CertificateInfo {
  const parsed = new X509Certificate(cert);
  const fields = parseDistinguishedName(parsed.subject);
  return {
    commonName: fields.get('CN')?.[0],
    organizations: fields.get('O') ?? [],
    notBefore: new Date(parsed.validFrom),
    notAfter: new Date(parsed.validTo),
    fingerprint256: parsed.fingerprint256,
  };
}

/** Node prints a subject as `KEY=value` lines; several O entries appear as several lines. */
function parseDistinguishedName(subject: string): Map<string, string[]> {
  const fields = new Map<string, string[]>();
  for (const line of subject.split('\n')) {
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    const key = line.slice(0, eq);
    const values = fields.get(key) ?? [];
    values.push(line.slice(eq + 1));
    fields.set(key, values);
  }
  return fields;
}

async function generateKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function exportKey(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key));
  const body = der.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
  return `-----BEGIN PRIVATE KEY-----\n${body}\n-----END PRIVATE KEY-----\n`;
}

function randomSerial(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = bytes[0]! & 0x7f;
  return Buffer.from(bytes).toString('hex');
}
