/**
 * The admission hook point of the request pipeline (DESIGN.md: authorize → admission → registry).
 *
 * Every create, update, patch and delete that reaches the registry passes through one
 * `AdmissionChain`: first every plugin's `admit` in order (mutating: it may return a changed
 * object), then every plugin's `validate` (it may only reject, by throwing a StatusError or a
 * ForbiddenError). Writes that fail admission are not stored.
 *
 * The server's chain (server.ts) is: the MutatingAdmissionWebhook plugin, the built-in RBAC
 * escalation check, then the ValidatingAdmissionWebhook plugin (webhooks/), as upstream orders
 * them. `noAdmission` is the empty chain (registry tests, embedding).
 */
import type { UserInfo } from './authn/types.js';
import type { KubeObject } from './object.js';
import type { ResourceType } from './resources/types.js';

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionAttributes {
  readonly operation: AdmissionOperation;
  readonly type: ResourceType;
  /** The version the request was made at. */
  readonly version: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
  /** The object to be stored (absent for DELETE). */
  readonly object?: KubeObject;
  /** The stored object (absent for CREATE). */
  readonly oldObject?: KubeObject;
  readonly user: UserInfo;
  readonly dryRun: boolean;
  /** Add a warning to the response (sent as `Warning: 299 - "<text>"`, printed by kubectl). */
  readonly warn?: (text: string) => void;
}

export interface AdmissionPlugin {
  readonly name: string;
  /** Mutating phase: return the object to continue with (or undefined to leave it unchanged). */
  admit?(attributes: AdmissionAttributes): Promise<KubeObject | undefined>;
  /** Validating phase: throw to reject. */
  validate?(attributes: AdmissionAttributes): Promise<void>;
}

export class AdmissionChain {
  constructor(readonly plugins: readonly AdmissionPlugin[]) {}

  /** Run the mutating phase, then the validating phase; returns the object to store. */
  async run(attributes: AdmissionAttributes): Promise<KubeObject | undefined> {
    let current = attributes;
    for (const plugin of this.plugins) {
      if (!plugin.admit) continue;
      const changed = await plugin.admit(current);
      if (changed) current = { ...current, object: changed };
    }
    for (const plugin of this.plugins) if (plugin.validate) await plugin.validate(current);
    return current.object;
  }
}

/** The empty chain: admits everything unchanged. */
export const noAdmission = new AdmissionChain([]);
