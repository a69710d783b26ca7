/**
 * The `cubbyhole` engine: a KV v1 store private to each token. Entries live under the HMAC of the
 * calling token (never the token itself) and are dropped when the token is revoked.
 */
import { createHash } from 'node:crypto';
import { InvalidRequestError, PermissionDeniedError } from '../errors.js';
import { FrameworkBackend } from '../framework/backend.js';
import type { Request } from '../logical.js';
import type { BackendRegistration } from '../registry.js';
import { getJSON, putJSON, type StorageView } from '../storage-view.js';

/** The storage prefix of one token's cubbyhole. */
export function cubbyholePrefix(tokenHash: string): string {
  return `${createHash('sha256').update(tokenHash).digest('hex')}/`;
}

export const cubbyholeRegistration: BackendRegistration = {
  type: 'cubbyhole',
  description: 'per-token private secret storage',
  factory: (context) => {
    const own = (request: Request): StorageView => {
      if (!request.caller) throw new PermissionDeniedError();
      if (request.caller.tokenType === 'batch') throw new InvalidRequestError('batch tokens do not have a cubbyhole');
      return context.storage.sub(cubbyholePrefix(request.caller.tokenHash));
    };
    return new FrameworkBackend({
      help: 'The cubbyhole secrets engine stores secrets private to the calling token.',
      paths: [
        {
          pattern: '.*',
          takesArbitraryInput: true,
          existenceCheck: async (request) => (await own(request).get(request.path)) !== undefined,
          operations: {
            read: async (request) => {
              const data = await getJSON<Record<string, unknown>>(own(request), request.path);
              return data ? { data } : undefined;
            },
            update: async (request) => {
              if (Object.keys(request.data).length === 0) throw new InvalidRequestError('missing data fields');
              await putJSON(own(request), request.path, request.data);
              return undefined;
            },
            delete: async (request) => {
              await own(request).delete(request.path);
              return undefined;
            },
            list: async (request) => ({ data: { keys: await own(request).list(request.path) } }),
          },
        },
      ],
    });
  },
};
