/** The `kv` secrets engine: version 1 or 2 by the mount's `options.version` (`kv-v2` implies 2, `generic` is v1). */
import type { BackendRegistration } from '../registry.js';
import { kvV1 } from './v1.js';
import { kvV2 } from './v2.js';

export const kvRegistration: BackendRegistration = {
  type: 'kv',
  aliases: ['kv-v2', 'kv-v1', 'generic'],
  description: 'key/value secret storage',
  impliedOptions: { 'kv-v2': { version: '2' }, 'kv-v1': { version: '1' } },
  factory: (context) => (context.options.version === '2' ? kvV2(context) : kvV1(context)),
};
