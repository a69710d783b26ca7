/**
 * The part of upstream's ServiceAccount admission plugin a client notices: a pod runs as a service
 * account that exists (`spec.serviceAccountName`, defaulted to `default` by the pod strategy).
 * A missing account is refused with upstream's 403; the namespace's `default` account, which the
 * namespace controller creates shortly after the namespace, is created on the spot instead of
 * failing a pod created right after its namespace.
 */
import type { AdmissionPlugin } from './admission.js';
import { forbidden } from './errors.js';
import { isPlainObject } from './object.js';

export interface ServiceAccountDirectory {
  exists(namespace: string, name: string): Promise<boolean>;
  ensureDefault(namespace: string): Promise<void>;
}

export function serviceAccountAdmission(accounts: ServiceAccountDirectory): AdmissionPlugin {
  return {
    name: 'ServiceAccount',
    async validate(attributes) {
      const { type, operation, subresource, object, namespace } = attributes;
      if (type.group !== '' || type.resource !== 'pods' || operation !== 'CREATE' || subresource !== '' || !object) return;
      const spec = isPlainObject(object.spec) ? object.spec : {};
      const account = typeof spec.serviceAccountName === 'string' && spec.serviceAccountName ? spec.serviceAccountName : 'default';
      if (await accounts.exists(namespace, account)) return;
      if (account === 'default') return accounts.ensureDefault(namespace);
      throw forbidden(type, attributes.name, `error looking up service account ${namespace}/${account}: serviceaccount "${account}" not found`);
    },
  };
}
