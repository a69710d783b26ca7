/**
 * Calling a webhook: where (`clientConfig.url`, or `clientConfig.service` resolved through the
 * cluster's own Service and Endpoints objects — there is no cluster DNS here), over HTTPS verified
 * with `caBundle` against the name `<service>.<namespace>.svc`, bounded by `timeoutSeconds`.
 * Failures read as the Go client's do, since users search for those texts.
 */
import https from 'node:https';
import { isIP } from 'node:net';
import { isPlainObject, type KubeObject } from '../object.js';
import { CallError } from './review.js';
import type { ClientConfig } from './webhook.js';

export interface Target {
  /** The URL as the webhook's configuration names it, with `?timeout=Ns` (Go prints the port, even 443). */
  readonly url: string;
  /** Path and query to request. */
  readonly path: string;
  /** Where to connect. */
  readonly host: string;
  readonly port: number;
  /** The name the server certificate must be valid for. */
  readonly servername: string;
}

/** Looks up the objects a `service` reference needs. */
export interface ServiceDirectory {
  service(namespace: string, name: string): Promise<KubeObject | undefined>;
  endpoints(namespace: string, name: string): Promise<KubeObject | undefined>;
}

export async function resolveTarget(config: ClientConfig, timeoutSeconds: number, services: ServiceDirectory): Promise<Target> {
  const timeout = `timeout=${Math.ceil(timeoutSeconds)}s`;
  if (config.url) {
    const parsed = new URL(config.url);
    const query = parsed.search ? `${parsed.search}&${timeout}` : `?${timeout}`;
    const url = `${config.url.replace(/\?.*$/, '')}${query}`;
    const host = parsed.hostname.replace(/^\[|\]$/g, '');
    return { url, path: parsed.pathname + query, host, port: Number(parsed.port || 443), servername: host };
  }
  const ref = config.service;
  if (!ref) throw new CallError('webhook has neither clientConfig.url nor clientConfig.service');
  const dnsName = `${ref.name}.${ref.namespace}.svc`;
  const path = `${ref.path ?? '/'}?${timeout}`;
  const url = `https://${dnsName}:${ref.port}${path}`;
  const fail = (why: string) => new CallError(`failed to call webhook: Post "${url}": ${why}`);

  const service = await services.service(ref.namespace, ref.name);
  if (!service) throw fail(`service "${ref.namespace}/${ref.name}" not found`);
  const spec = isPlainObject(service.spec) ? service.spec : {};
  if (typeof spec.externalName === 'string' && spec.type === 'ExternalName') {
    return { url, path, host: spec.externalName, port: ref.port, servername: dnsName };
  }
  const ports = (Array.isArray(spec.ports) ? spec.ports : []).filter(isPlainObject);
  const servicePort = ports.find((p) => p.port === ref.port);
  if (!servicePort) throw fail(`service "${ref.namespace}/${ref.name}" has no port ${ref.port}`);
  const endpoints = await services.endpoints(ref.namespace, ref.name);
  const subsets = (Array.isArray(endpoints?.subsets) ? endpoints!.subsets : []).filter(isPlainObject);
  for (const subset of subsets) {
    const addresses = (Array.isArray(subset.addresses) ? subset.addresses : []).filter(isPlainObject);
    const subsetPorts = (Array.isArray(subset.ports) ? subset.ports : []).filter(isPlainObject);
    const port =
      subsetPorts.find((p) => servicePort.name !== undefined && p.name === servicePort.name) ??
      subsetPorts.find((p) => p.port === (typeof servicePort.targetPort === 'number' ? servicePort.targetPort : servicePort.port)) ??
      (subsetPorts.length === 1 ? subsetPorts[0] : undefined);
    const address = addresses.find((a) => typeof a.ip === 'string');
    if (address && port && typeof port.port === 'number') return { url, path, host: address.ip as string, port: port.port, servername: dnsName };
  }
  throw fail(`no endpoints available for service "${ref.name}"`);
}

/**
 * One keep-alive agent per (address, server name, CA bundle), as upstream keeps one client per
 * webhook client configuration: a fresh TLS handshake per call costs more than the call itself.
 * Bounded, oldest dropped first, so changing configurations cannot grow it without limit.
 */
const agents = new Map<string, https.Agent>();
const MAX_AGENTS = 64;

function agentFor(target: Target, caBundle: string | undefined): https.Agent {
  const key = JSON.stringify([target.host, target.port, target.servername, caBundle ?? '']);
  let agent = agents.get(key);
  if (agent) {
    agents.delete(key);
    agents.set(key, agent);
    return agent;
  }
  agent = new https.Agent({ keepAlive: true, maxSockets: 32, ca: caBundle, servername: isIP(target.servername) ? undefined : target.servername });
  agents.set(key, agent);
  if (agents.size > MAX_AGENTS) {
    const [oldest, dropped] = agents.entries().next().value as [string, https.Agent];
    agents.delete(oldest);
    dropped.destroy();
  }
  return agent;
}

/** POST the review; resolves with the parsed JSON answer, rejects with a CallError. */
export async function post(target: Target, caBundle: string | undefined, body: object, timeoutSeconds: number): Promise<unknown> {
  const payload = JSON.stringify(body);
  const deadline = Date.now() + timeoutSeconds * 1000;
  try {
    return await attempt(target, caBundle, payload, deadline);
  } catch (error) {
    // A kept-alive connection the server has since closed: send once more on a new one (the
    // request never reached the webhook), as Node's documentation advises for reused sockets.
    if (error instanceof StaleConnection) return attempt(target, caBundle, payload, deadline);
    throw error;
  }
}

class StaleConnection extends Error {}

function attempt(target: Target, caBundle: string | undefined, payload: string, deadline: number): Promise<unknown> {
  const prefix = `failed to call webhook: Post "${target.url}"`;
  return new Promise((resolve, reject) => {
    const request = https.request(
      {
        host: target.host,
        port: target.port,
        path: target.path,
        method: 'POST',
        servername: isIP(target.servername) ? undefined : target.servername,
        headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': Buffer.byteLength(payload) },
        agent: agentFor(target, caBundle),
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', (error) => reject(new CallError(`${prefix}: ${goError(error, target)}`)));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const status = response.statusCode ?? 0;
          if (status < 200 || status >= 300) return reject(new CallError(`received invalid webhook response: HTTP ${status}: ${text.slice(0, 200)}`));
          try {
            resolve(JSON.parse(text));
          } catch {
            reject(new CallError(`received invalid webhook response: the body is not JSON: ${JSON.stringify(text.slice(0, 80))}`));
          }
        });
      },
    );
    const timer = setTimeout(() => request.destroy(Object.assign(new Error('deadline'), { code: 'ETIMEDOUT' })), Math.max(0, deadline - Date.now()));
    request.on('error', (error: Error & { code?: string }) => {
      if (request.reusedSocket && error.code === 'ECONNRESET') reject(new StaleConnection());
      else reject(new CallError(`${prefix}: ${goError(error, target)}`));
    });
    request.on('close', () => clearTimeout(timer));
    request.end(payload);
  });
}

/** Node's network and TLS failures in the words of Go's net/http, which is what users look up. */
function goError(error: Error & { code?: string }, target: Target): string {
  const where = `${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}`;
  switch (error.code) {
    case 'ECONNREFUSED':
      return `dial tcp ${where}: connect: connection refused`;
    case 'ETIMEDOUT':
    case 'ESOCKETTIMEDOUT':
      return 'context deadline exceeded';
    case 'ECONNRESET':
      return `read tcp ${where}: read: connection reset by peer`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `dial tcp: lookup ${target.host}: no such host`;
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
      return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `tls: failed to verify certificate: x509: certificate is not valid for ${target.servername}`;
    case 'CERT_HAS_EXPIRED':
      return 'tls: failed to verify certificate: x509: certificate has expired or is not yet valid';
    default:
      return error.message;
  }
}
