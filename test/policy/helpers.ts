/** Start policy engines on loopback for tests, and talk to them with plain HTTP. */
import { PassThrough } from 'node:stream';
import { silentLogger } from '../../src/common/log.js';
import { startPolicyEngine, type EngineOptions, type PolicyEngine } from '../../src/policy/runtime.js';

export const SEED_POLICY_V1 = `package httpapi.authz

default allow := false

allow if {
  input.method == "GET"
  input.path == ["salary", input.user]
}

allow if {
  input.method == "GET"
  some user in data.reports[input.user]
  input.path == ["salary", user]
}
`;

export async function startEngine(options: Partial<EngineOptions> = {}): Promise<PolicyEngine & { decisions: () => Record<string, unknown>[] }> {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk) => (text += chunk));
  const engine = await startPolicyEngine({ address: { host: '127.0.0.1', port: 0 }, logger: silentLogger(), decisionLogStream: stream, ...options });
  return Object.assign(engine, {
    decisions: () => text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>),
  });
}

export interface Reply {
  readonly status: number;
  readonly text: string;
  readonly headers: Headers;
  /** The body parsed as JSON (undefined when empty or not JSON). */
  readonly json: any;
}

export async function call(base: string, method: string, path: string, body?: string | Buffer | object, headers: Record<string, string> = {}): Promise<Reply> {
  const payload = body === undefined ? undefined : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  const response = await fetch(base + path, { method, headers, body: payload });
  const text = await response.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, text, headers: response.headers, json };
}
