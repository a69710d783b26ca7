/**
 * The AdmissionReview a webhook receives (admission.k8s.io v1 or v1beta1: same shape, kube.md
 * §6.3) and the checks its answer must pass (§6.4). An answer that fails a check is a *calling*
 * error (CallError), handled by the webhook's failurePolicy like an unreachable server.
 */
import type { Operation } from 'fast-json-patch';
import type { AdmissionAttributes } from '../admission.js';
import { isPlainObject, type KubeObject } from '../object.js';
import { apiVersionOf } from '../resources/types.js';
import type { Webhook } from './webhook.js';

export const REVIEW_VERSIONS = ['v1', 'v1beta1'] as const;
export type ReviewVersion = (typeof REVIEW_VERSIONS)[number];

/** A failure to get a usable answer from a webhook; `message` is what follows `failed calling webhook "<name>": `. */
export class CallError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CallError';
  }
}

/** The first version in the webhook's list that we speak. */
export function reviewVersionFor(webhook: Webhook): ReviewVersion | undefined {
  return webhook.admissionReviewVersions.find((v): v is ReviewVersion => (REVIEW_VERSIONS as readonly string[]).includes(v));
}

const OPTIONS_KIND = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions', CONNECT: '' } as const;

export function buildReview(version: ReviewVersion, uid: string, attributes: AdmissionAttributes, webhookVersion: string): object {
  const { type } = attributes;
  const at = (object: KubeObject | undefined) =>
    object ? { ...object, apiVersion: apiVersionOf(type.group, webhookVersion), kind: type.kind } : null;
  const user = attributes.user;
  const optionsKind = OPTIONS_KIND[attributes.operation];
  return {
    kind: 'AdmissionReview',
    apiVersion: `admission.k8s.io/${version}`,
    request: {
      uid,
      kind: { group: type.group, version: webhookVersion, kind: type.kind },
      resource: { group: type.group, version: webhookVersion, resource: type.resource },
      ...(attributes.subresource ? { subResource: attributes.subresource } : {}),
      requestKind: { group: type.group, version: attributes.version, kind: type.kind },
      requestResource: { group: type.group, version: attributes.version, resource: type.resource },
      ...(attributes.subresource ? { requestSubResource: attributes.subresource } : {}),
      name: attributes.name,
      ...(attributes.namespace ? { namespace: attributes.namespace } : {}),
      operation: attributes.operation,
      userInfo: {
        username: user.name,
        ...(user.uid ? { uid: user.uid } : {}),
        groups: [...user.groups],
        ...(user.extra && Object.keys(user.extra).length ? { extra: user.extra } : {}),
      },
      object: at(attributes.object),
      oldObject: at(attributes.oldObject),
      dryRun: attributes.dryRun,
      ...(optionsKind ? { options: { kind: optionsKind, apiVersion: 'meta.k8s.io/v1' } } : {}),
    },
  };
}

export interface WebhookResponse {
  readonly allowed: boolean;
  readonly status?: { readonly code?: number; readonly message?: string; readonly reason?: string };
  readonly patch?: Operation[];
  readonly warnings: readonly string[];
}

export function readResponse(version: ReviewVersion, uid: string, body: unknown, webhook: Webhook): WebhookResponse {
  if (!isPlainObject(body)) throw new CallError('received invalid webhook response: the body is not a JSON object');
  if (version === 'v1' && (body.apiVersion !== 'admission.k8s.io/v1' || body.kind !== 'AdmissionReview')) {
    throw new CallError(`expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${String(body.apiVersion ?? '')}, Kind=${String(body.kind ?? '')}`);
  }
  const response = body.response;
  if (!isPlainObject(response)) throw new CallError('received invalid webhook response: webhook response was absent');
  if (version === 'v1' && response.uid !== uid) throw new CallError(`expected response.uid="${uid}", got "${String(response.uid ?? '')}"`);

  const hasPatch = typeof response.patch === 'string' && response.patch !== '';
  const hasPatchType = typeof response.patchType === 'string' && response.patchType !== '';
  if (webhook.kind === 'validating') {
    if (hasPatch) throw new CallError('validating webhook may not return response.patch');
    if (hasPatchType) throw new CallError('validating webhook may not return response.patchType');
  } else if (version === 'v1') {
    if (hasPatch && !hasPatchType) throw new CallError('webhook returned response.patch but not response.patchType');
    if (hasPatchType && !hasPatch) throw new CallError('webhook returned response.patchType but not response.patch');
    if (hasPatchType && response.patchType !== 'JSONPatch') throw new CallError(`webhook returned invalid response.patchType of "${String(response.patchType)}"`);
  }
  let patch: Operation[] | undefined;
  if (hasPatch) {
    try {
      const decoded = JSON.parse(Buffer.from(response.patch as string, 'base64').toString('utf8'));
      if (!Array.isArray(decoded)) throw new Error('not a list');
      patch = decoded as Operation[];
    } catch {
      throw new CallError('received undecodable patch in webhook response');
    }
  }
  const status = isPlainObject(response.status) ? response.status : undefined;
  return {
    allowed: response.allowed === true,
    status: status
      ? {
          code: typeof status.code === 'number' ? status.code : undefined,
          message: typeof status.message === 'string' ? status.message : undefined,
          reason: typeof status.reason === 'string' ? status.reason : undefined,
        }
      : undefined,
    patch,
    warnings: Array.isArray(response.warnings) ? response.warnings.filter((w): w is string => typeof w === 'string') : [],
  };
}
