/**
 * The seed's sample application: a small web API that asks the policy engine, for every request,
 * whether to serve it. It sends `POST <policy_url>/v1/data/httpapi/authz` with
 * `{"input": {"method", "path", "user"}}` and answers 401 `Unauthorized` when `allow` is missing or
 * false, 200 otherwise. (The engine decides; it does not authenticate. This demo takes the user
 * name from HTTP Basic credentials and does not check the password.)
 *
 *   npx tsx examples/http-authz/app.ts [--policy-url http://localhost:8181] [--port 5000]
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';

export interface AppOptions {
  /** The policy engine's address, e.g. `http://localhost:8181`. */
  readonly policyUrl: string;
}

/** The caller's user name from `Authorization: Basic …`, or undefined. */
function userOf(request: IncomingMessage): string | undefined {
  const header = request.headers.authorization;
  const m = header ? /^Basic\s+(\S+)$/i.exec(header) : null;
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon === -1 ? decoded : decoded.slice(0, colon);
}

/** Ask the engine; any failure to get a clear `true` is a denial. */
async function allowed(policyUrl: string, input: Record<string, unknown>): Promise<boolean> {
  try {
    const response = await fetch(`${policyUrl}/v1/data/httpapi/authz`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input }),
    });
    if (!response.ok) return false;
    const body = (await response.json()) as { result?: { allow?: unknown } };
    return body.result?.allow === true;
  } catch {
    return false;
  }
}

export function createApp(options: AppOptions): Server {
  return createServer(async (request, response) => {
    const path = new URL(request.url ?? '/', 'http://app').pathname.split('/').filter((s) => s !== '').map(decodeURIComponent);
    const input = { method: request.method, path, user: userOf(request) };
    if (!(await allowed(options.policyUrl, input))) {
      response.writeHead(401, { 'content-type': 'text/plain' }).end('Unauthorized');
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path, user: input.user }) + '\n');
  });
}

export async function startApp(options: AppOptions & { host?: string; port?: number }): Promise<{ url: string; close(): Promise<void> }> {
  const server = createApp(options);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i === -1 ? undefined : process.argv[i + 1];
  };
  const app = await startApp({ policyUrl: arg('--policy-url') ?? 'http://localhost:8181', port: Number(arg('--port') ?? 5000) });
  process.stdout.write(`http-authz example listening on ${app.url}\n`);
}
