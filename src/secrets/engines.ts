/** Secrets engines by type name (see registry.ts). */
import type { BackendRegistration } from './registry.js';
import { kvRegistration } from './kv/index.js';
import { cubbyholeRegistration } from './kv/cubbyhole.js';

export const secretsEngines: readonly BackendRegistration[] = [kvRegistration, cubbyholeRegistration];
