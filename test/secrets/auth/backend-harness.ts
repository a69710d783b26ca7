/**
 * Drive one auth-method backend directly on in-memory storage, the way the core's dispatcher does:
 * a write becomes `create` or `update` by the path's existence check, errors stay typed. For the
 * end-to-end tests through HTTP and real clients, see e2e.test.ts.
 */
import assert from 'node:assert/strict';
import type { Backend } from '../../../src/secrets/framework/backend.js';
import type { Auth, MountInfo, Operation, Response } from '../../../src/secrets/logical.js';
import type { BackendContext, BackendRegistration } from '../../../src/secrets/registry.js';
import { MemoryView } from '../../../src/secrets/storage-view.js';
import { SecretsError } from '../../../src/secrets/errors.js';
import { silentLogger } from '../../../src/common/log.js';

export interface Harness {
  readonly backend: Backend;
  readonly storage: MemoryView;
  readonly entries: Map<string, Uint8Array>;
  call(operation: Exclude<Operation, 'create' | 'update'> | 'write', path: string, data?: Record<string, unknown>, options?: { remoteAddress?: string }): Promise<Response | undefined>;
  /** The call must fail with this status and `errors` body. */
  refuses(operation: Exclude<Operation, 'create' | 'update'> | 'write', path: string, data: Record<string, unknown>, status: number, errors: readonly string[], options?: { remoteAddress?: string }): Promise<void>;
  renew(auth: Auth, path: string): Promise<Auth>;
}

export async function harness(registration: BackendRegistration, mountPath = registration.type, typeName = registration.type): Promise<Harness> {
  const entries = new Map<string, Uint8Array>();
  const storage = new MemoryView(entries);
  const mount: MountInfo = { path: `auth/${mountPath}/`, type: typeName, accessor: `auth_${typeName}_12345678`, uuid: '00000000-0000-4000-8000-000000000000', kind: 'auth' };
  const context: BackendContext = {
    mount,
    storage,
    logger: silentLogger(),
    system: { defaultLeaseTtl: () => 2764800, maxLeaseTtl: () => 2764800, policyExists: async (name) => ['default', 'root', 'dev', 'ops', 'web'].includes(name), strictVault: false },
    options: {},
  };
  const backend = await registration.factory(context);
  const call: Harness['call'] = async (op, path, data = {}, options = {}) => {
    const base = { path, data, storage, mount, remoteAddress: options.remoteAddress ?? '127.0.0.1', headers: {} };
    let operation: Operation = op === 'write' ? 'update' : op;
    if (op === 'write') {
      const exists = await backend.existenceCheck({ ...base, operation: 'update' });
      operation = exists === false ? 'create' : 'update';
    }
    return backend.handleRequest({ ...base, operation });
  };
  return {
    backend,
    storage,
    entries,
    call,
    async refuses(op, path, data, status, errors, options) {
      await assert.rejects(call(op, path, data, options), (error: unknown) => {
        assert.ok(error instanceof SecretsError, `expected a SecretsError, got ${String(error)}`);
        assert.deepEqual({ status: error.statusCode, errors: error.errors }, { status, errors });
        return true;
      });
    },
    async renew(auth, path) {
      assert.ok(backend.renew, 'backend has renew');
      return backend.renew!({ auth, storage, mount, increment: 0, path });
    },
  };
}
