/**
 * The cluster's certificates under its data directory: a CA (`pki/ca.crt`, `pki/ca.key`) that signs
 * the serving certificate (`pki/apiserver.crt`, `.key`, for 127.0.0.1, ::1 and localhost plus the
 * bind address) and the admin client certificate (CN `kubernetes-admin`, O `system:masters`).
 * Existing files are reused, so clients keep trusting a restarted server.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ensureCertificateAuthority, readPemFile, type CertificateAuthority, type CertificatePair } from '../common/tls.js';

export const ADMIN_USER = 'kubernetes-admin';
export const ADMIN_GROUP = 'system:masters';

export function pkiDir(dataDir: string): string {
  return path.join(dataDir, 'pki');
}

export async function clusterCa(dataDir: string): Promise<CertificateAuthority> {
  return ensureCertificateAuthority(pkiDir(dataDir), 'portcullis-cluster-ca');
}

/** The serving certificate: loaded from the data directory, or issued by the cluster CA and written there. */
export async function servingCertificate(dataDir: string, ca: CertificateAuthority, hosts: readonly string[]): Promise<CertificatePair> {
  const certFile = path.join(pkiDir(dataDir), 'apiserver.crt');
  const keyFile = path.join(pkiDir(dataDir), 'apiserver.key');
  if (existsSync(certFile) && existsSync(keyFile)) {
    return { cert: await readPemFile(certFile, 'CERTIFICATE'), key: await readPemFile(keyFile, 'PRIVATE KEY') };
  }
  const names = [...new Set(['127.0.0.1', '::1', 'localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', ...hosts.filter((h) => h && h !== '0.0.0.0' && h !== '::')])];
  const pair = await ca.issueServer({ commonName: 'kube-apiserver', hosts: names });
  await mkdir(pkiDir(dataDir), { recursive: true, mode: 0o700 });
  await writeFile(certFile, pair.cert, { mode: 0o644 });
  await writeFile(keyFile, pair.key, { mode: 0o600 });
  return pair;
}

/** A client certificate for the admin (group system:masters), signed by the cluster CA. */
export function adminCertificate(ca: CertificateAuthority): Promise<CertificatePair> {
  return ca.issueClient({ commonName: ADMIN_USER, organizations: [ADMIN_GROUP] });
}
