/** KV version 1: one unversioned JSON object per key. */
import { parseDurationSeconds } from '../../common/duration.js';
import { InvalidRequestError } from '../errors.js';
import { FrameworkBackend } from '../framework/backend.js';
import type { BackendContext } from '../registry.js';
import { getJSON, putJSON } from '../storage-view.js';

export function kvV1(context: BackendContext): FrameworkBackend {
  const storage = context.storage;
  return new FrameworkBackend({
    help: 'The generic key/value secrets engine (version 1) stores arbitrary JSON objects at paths.',
    paths: [
      {
        pattern: '.*',
        takesArbitraryInput: true,
        existenceCheck: async (request) => (await storage.get(request.path)) !== undefined,
        operations: {
          read: async (request) => {
            const data = await getJSON<Record<string, unknown>>(storage, request.path);
            if (!data) return undefined;
            let lease = context.system.defaultLeaseTtl();
            const ttl = data.ttl ?? data.lease;
            if (typeof ttl === 'string' || typeof ttl === 'number') {
              try {
                lease = parseDurationSeconds(ttl);
              } catch {
                // An unparsable `ttl` key is just data.
              }
            }
            return { data, leaseDuration: lease };
          },
          create: write,
          update: write,
          delete: async (request) => {
            await storage.delete(request.path);
            return undefined;
          },
          list: async (request) => ({ data: { keys: await storage.list(request.path) } }),
        },
        synopsis: 'Pass-through secret storage to the storage backend, allowing you to read/write arbitrary data into secret storage.',
      },
    ],
  });

  async function write(request: { path: string; data: Readonly<Record<string, unknown>> }) {
    if (Object.keys(request.data).length === 0) throw new InvalidRequestError('missing data fields');
    if (request.path === '' || request.path.endsWith('/')) throw new InvalidRequestError('cannot write to a path ending in \'/\'');
    await putJSON(storage, request.path, request.data);
    return undefined;
  }
}
