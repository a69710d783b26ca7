/**
 * x509 client certificates (kube.md §2.1, G9): user = subject CN, groups = every subject O.
 * Authenticates only when Node verified the chain during the handshake (`authorized`) AND the
 * chain leads to a certificate of the `--client-ca-file` bundle, so a server whose TLS trusts
 * more than the client CA cannot widen who authenticates. ExtKeyUsage, when present, must allow
 * client authentication.
 */
import { X509Certificate, createHash } from 'node:crypto';
import type { DetailedPeerCertificate } from 'node:tls';
import 'reflect-metadata'; // @peculiar/x509 needs the Reflect metadata API before it loads
import * as pkix from '@peculiar/x509';
import { AuthenticationError, type AuthenticationRequest, type AuthenticationResult, type Authenticator } from './types.js';

const ClientAuth = '1.3.6.1.5.5.7.3.2';
const AnyExtendedKeyUsage = '2.5.29.37.0';

/** Splits a PEM bundle into certificates. */
export function parseCertificateBundle(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((block) => new X509Certificate(block));
}

const asList = (value: string | string[] | undefined): string[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/** The presented chain, leaf first (Node links each cert to its issuer; a self-issued cert links to itself). */
function presentedChain(peer: DetailedPeerCertificate): X509Certificate[] {
  const chain: X509Certificate[] = [];
  const seen = new Set<DetailedPeerCertificate>();
  for (let cert: DetailedPeerCertificate | undefined = peer; cert?.raw && !seen.has(cert); cert = cert.issuerCertificate) {
    seen.add(cert);
    chain.push(new X509Certificate(cert.raw));
  }
  return chain;
}

/** `AB:CD:…`, as upstream prints key identifiers. */
const columnSeparatedHex = (hex: string | undefined): string => (hex ?? '').toUpperCase().match(/../g)?.join(':') ?? '';

/** Upstream's certificate identifier for logs: `SN=<decimal>, SKID=<hex>, AKID=<hex>`. */
export function certificateIdentifier(der: Buffer): string {
  try {
    const cert = new pkix.X509Certificate(der);
    const skid = cert.getExtension(pkix.SubjectKeyIdentifierExtension)?.keyId;
    const akid = cert.getExtension(pkix.AuthorityKeyIdentifierExtension)?.keyId;
    return `SN=${BigInt(`0x${cert.serialNumber}`).toString()}, SKID=${columnSeparatedHex(skid)}, AKID=${columnSeparatedHex(akid)}`;
  } catch {
    return `SHA256=${createHash('sha256').update(der).digest('hex')}`;
  }
}

export class X509Authenticator implements Authenticator {
  private readonly roots: readonly X509Certificate[];

  constructor(clientCaPem: string, private readonly now: () => Date = () => new Date()) {
    this.roots = parseCertificateBundle(clientCaPem);
    if (this.roots.length === 0) throw new Error('client CA bundle holds no certificate');
  }

  async authenticate(request: AuthenticationRequest): Promise<AuthenticationResult | null> {
    const peer = request.tls?.peerCertificate;
    if (!peer || !peer.raw) return null;
    const chain = presentedChain(peer);
    const failure = request.tls!.authorized ? this.verify(chain) : (request.tls!.authorizationError ?? 'certificate not verified');
    if (failure) throw new AuthenticationError(`verifying certificate ${certificateIdentifier(peer.raw)} failed: ${failure}`);
    const commonNames = asList(peer.subject?.CN);
    const name = commonNames[commonNames.length - 1] ?? '';
    if (name === '') return null;
    return {
      user: {
        name,
        groups: asList(peer.subject?.O),
        extra: { 'authentication.kubernetes.io/credential-id': [`X509SHA256=${createHash('sha256').update(peer.raw).digest('hex')}`] },
      },
    };
  }

  /** null when the chain is valid now, leads to a client CA and the leaf may authenticate clients; the reason otherwise. */
  private verify(chain: readonly X509Certificate[]): string | null {
    const now = this.now().getTime();
    for (const cert of chain) {
      if (now < Date.parse(cert.validFrom) || now > Date.parse(cert.validTo)) return 'x509: certificate has expired or is not yet valid';
    }
    const usages = chain[0]!.keyUsage;
    if (usages && usages.length && !usages.includes(ClientAuth) && !usages.includes(AnyExtendedKeyUsage)) {
      return 'x509: certificate specifies an incompatible key usage';
    }
    for (let i = 0; i < chain.length; i++) {
      const cert = chain[i]!;
      const root = this.roots.find((r) => cert.checkIssued(r) && cert.verify(r.publicKey));
      if (root) return null;
      if (this.roots.some((r) => r.raw.equals(cert.raw))) return null;
      const next = chain[i + 1];
      if (!next || !next.ca || !cert.checkIssued(next) || !cert.verify(next.publicKey)) break;
    }
    return 'x509: certificate signed by unknown authority';
  }
}
