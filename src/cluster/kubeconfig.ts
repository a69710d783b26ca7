/**
 * kubeconfig files for kubectl and client-node: one cluster (server + CA data, so TLS verifies),
 * one user (client certificate, bearer token, or basic credentials), one context.
 */
import { stringify } from 'yaml';

export type KubeconfigCredentials =
  | { readonly kind: 'certificate'; readonly cert: string; readonly key: string }
  | { readonly kind: 'token'; readonly token: string }
  | { readonly kind: 'basic'; readonly username: string; readonly password: string };

export interface KubeconfigOptions {
  readonly server: string;
  /** PEM of the CA that signed the serving certificate. */
  readonly ca: string;
  readonly user: string;
  readonly credentials: KubeconfigCredentials;
  readonly clusterName?: string;
  readonly namespace?: string;
}

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

export function kubeconfig(options: KubeconfigOptions): string {
  const cluster = options.clusterName ?? 'portcullis';
  const context = `${options.user}@${cluster}`;
  const c = options.credentials;
  const user =
    c.kind === 'certificate' ? { 'client-certificate-data': b64(c.cert), 'client-key-data': b64(c.key) }
    : c.kind === 'token' ? { token: c.token }
    : { username: c.username, password: c.password };
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server: options.server, 'certificate-authority-data': b64(options.ca) } }],
    users: [{ name: options.user, user }],
    contexts: [{ name: context, context: { cluster, user: options.user, namespace: options.namespace ?? 'default' } }],
    'current-context': context,
    preferences: {},
  });
}
