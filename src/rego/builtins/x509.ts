import { X509Certificate } from 'node:crypto';
import { RegoObject, num, type Value } from '../value/index.js';
import { BuiltinError, defineBuiltins, type BuiltinContext } from './registry.js';
import { record, str } from './operands.js';
import { T, anyObject } from './types.js';

/**
 * `crypto.x509.parse_certificates` and `parse_and_verify_certificates`. OPA returns Go's
 * x509.Certificate marshalled as JSON; this build returns the fields policies read, under Go's
 * names and encodings: Raw, Version, SerialNumber, Subject, Issuer (pkix.Name: CommonName,
 * Country, Organization, OrganizationalUnit, Locality, Province, StreetAddress, PostalCode,
 * SerialNumber, Names), NotBefore, NotAfter (RFC 3339), IsCA, BasicConstraintsValid, DNSNames,
 * EmailAddresses, IPAddresses, ExtKeyUsage (Go's enum numbers), PublicKeyAlgorithm (Go's enum).
 * Other Go fields (extensions, key ids, policies…) are absent.
 */

const NAME_FIELDS: Record<string, [string, number[]]> = {
  CN: ['CommonName', [2, 5, 4, 3]],
  C: ['Country', [2, 5, 4, 6]],
  O: ['Organization', [2, 5, 4, 10]],
  OU: ['OrganizationalUnit', [2, 5, 4, 11]],
  L: ['Locality', [2, 5, 4, 7]],
  ST: ['Province', [2, 5, 4, 8]],
  street: ['StreetAddress', [2, 5, 4, 9]],
  postalCode: ['PostalCode', [2, 5, 4, 17]],
  serialNumber: ['SerialNumber', [2, 5, 4, 5]],
};

const EXT_KEY_USAGE: Record<string, number> = {
  '2.5.29.37.0': 0,
  '1.3.6.1.5.5.7.3.1': 1,
  '1.3.6.1.5.5.7.3.2': 2,
  '1.3.6.1.5.5.7.3.3': 3,
  '1.3.6.1.5.5.7.3.4': 4,
  '1.3.6.1.5.5.7.3.5': 5,
  '1.3.6.1.5.5.7.3.6': 6,
  '1.3.6.1.5.5.7.3.7': 7,
  '1.3.6.1.5.5.7.3.8': 8,
  '1.3.6.1.5.5.7.3.9': 9,
};

const PUBLIC_KEY_ALGORITHM: Record<string, number> = { rsa: 1, 'rsa-pss': 1, dsa: 2, ec: 3, ed25519: 4 };

/** Go's pkix.Name from Node's `CN=x\nO=y` rendering. */
function pkixName(text: string): RegoObject {
  const fields: Record<string, string[]> = {};
  const names: Value[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    for (const part of line.split('+')) {
      const eq = part.indexOf('=');
      if (eq < 0) continue;
      const key = part.slice(0, eq);
      const value = part.slice(eq + 1);
      const known = NAME_FIELDS[key];
      if (!known) continue;
      (fields[known[0]] ??= []).push(value);
      names.push(record({ Type: known[1], Value: value }));
    }
  }
  const out = new RegoObject();
  for (const [, [field]] of Object.entries(NAME_FIELDS)) {
    const values = fields[field];
    if (field === 'CommonName' || field === 'SerialNumber') out.set(field, values?.[0] ?? '');
    else out.set(field, values ?? null);
  }
  out.set('Names', names);
  out.set('ExtraNames', null);
  return out;
}

function rfc3339(date: string): string {
  return new Date(date).toISOString().replace('.000Z', 'Z');
}

function altNames(cert: X509Certificate, kind: 'DNS' | 'email' | 'IP Address'): Value {
  const san = cert.subjectAltName;
  if (!san) return null;
  const out = san
    .split(', ')
    .filter((p) => p.startsWith(kind + ':'))
    .map((p) => p.slice(kind.length + 1));
  return out.length ? out : null;
}

function certificateValue(cert: X509Certificate): Value {
  const eku = Array.isArray(cert.keyUsage) ? cert.keyUsage.map((oid) => EXT_KEY_USAGE[oid]).filter((x) => x !== undefined) : [];
  return record({
    Raw: cert.raw.toString('base64'),
    Version: 3,
    SerialNumber: num.fromBigInt(BigInt('0x' + cert.serialNumber)),
    Subject: pkixName(cert.subject),
    Issuer: pkixName(cert.issuer),
    NotBefore: rfc3339(cert.validFrom),
    NotAfter: rfc3339(cert.validTo),
    IsCA: cert.ca,
    BasicConstraintsValid: cert.ca,
    DNSNames: altNames(cert, 'DNS'),
    EmailAddresses: altNames(cert, 'email'),
    IPAddresses: altNames(cert, 'IP Address'),
    ExtKeyUsage: eku.length ? (eku as number[]) : null,
    PublicKeyAlgorithm: PUBLIC_KEY_ALGORITHM[cert.publicKey.asymmetricKeyType ?? ''] ?? 0,
  });
}

/** PEM, base64 PEM, or base64 DER (one or more certificates). */
function certificatesOf(input: string): X509Certificate[] {
  let text = input;
  if (!text.startsWith('-----BEGIN')) {
    const bytes = Buffer.from(text, 'base64');
    if (bytes.length === 0) throw new BuiltinError('x509: malformed certificate');
    if (bytes.toString('latin1').startsWith('-----BEGIN')) text = bytes.toString('utf8');
    else return derCertificates(bytes);
  }
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((b) => parse(b));
}

/** Splits concatenated DER certificates by their outer SEQUENCE lengths. */
function derCertificates(bytes: Buffer): X509Certificate[] {
  const out: X509Certificate[] = [];
  let i = 0;
  while (i < bytes.length) {
    if (bytes[i] !== 0x30) throw new BuiltinError('x509: malformed certificate');
    let len = bytes[i + 1]!;
    let header = 2;
    if (len & 0x80) {
      const n = len & 0x7f;
      len = 0;
      for (let j = 0; j < n; j++) len = len * 256 + bytes[i + 2 + j]!;
      header += n;
    }
    out.push(parse(bytes.subarray(i, i + header + len)));
    i += header + len;
  }
  return out;
}

function parse(data: string | Buffer): X509Certificate {
  try {
    return new X509Certificate(data);
  } catch (e) {
    throw new BuiltinError(`x509: malformed certificate: ${(e as Error).message}`);
  }
}

/** Root first, leaf last: each certificate signed by the previous one and valid at `now`. */
function chainValid(certs: X509Certificate[], ctx: BuiltinContext): boolean {
  if (certs.length < 2) return false;
  const nowMs = Number(ctx.timeNs / 1_000_000n);
  for (let i = 0; i < certs.length; i++) {
    const c = certs[i]!;
    if (nowMs < Date.parse(c.validFrom) || nowMs > Date.parse(c.validTo)) return false;
    const issuer = i === 0 ? c : certs[i - 1]!;
    if (i > 0 && !issuer.ca) return false;
    if (!c.checkIssued(issuer) || !c.verify(issuer.publicKey)) return false;
  }
  return true;
}

export const x509 = defineBuiltins(
  {
    name: 'crypto.x509.parse_certificates',
    decl: T.fn([T.string], T.arrayOf(anyObject)),
    impl: ([s]) => certificatesOf(str(s!)).map(certificateValue),
  },
  {
    name: 'crypto.x509.parse_and_verify_certificates',
    decl: T.fn([T.string], T.tuple(T.boolean, T.arrayOf(anyObject))),
    impl: ([s], ctx) => {
      const certs = certificatesOf(str(s!));
      return chainValid(certs, ctx) ? [true, certs.map(certificateValue)] : [false, []];
    },
  },
);
