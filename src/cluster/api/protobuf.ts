/**
 * Decoding of `application/vnd.kubernetes.protobuf` request bodies (G2, kube.md §7.9): kubectl ≥1.32
 * sends its typed-client writes this way and does not fall back to JSON on a 415.
 *
 * A generic wire-format reader plus one field table per message type turns the envelope
 * (`k8s\0` + runtime.Unknown{typeMeta, raw}) into the same JSON object a JSON client would send.
 * Replies are always JSON (the Accept header allows it). Unknown fields are skipped.
 */
import { badRequest, unsupportedMediaType } from '../errors.js';
import type { JsonObject } from '../object.js';

type Scalar = 'string' | 'bytes' | 'varint' | 'bool';

interface FieldSpec {
  readonly name: string;
  readonly type: Scalar | MessageSpec | MapSpec;
  readonly repeated?: boolean;
}
interface MessageSpec { readonly fields: Readonly<Record<number, FieldSpec>> }
interface MapSpec { readonly map: Scalar | MessageSpec }

const f = (name: string, type: FieldSpec['type'], repeated = false): FieldSpec => ({ name, type, repeated });
const msg = (fields: Record<number, FieldSpec>): MessageSpec => ({ fields });

const Time = msg({ 1: f('seconds', 'varint'), 2: f('nanos', 'varint') });
const OwnerReference = msg({ 1: f('kind', 'string'), 3: f('name', 'string'), 4: f('uid', 'string'), 5: f('apiVersion', 'string'), 6: f('controller', 'bool'), 7: f('blockOwnerDeletion', 'bool') });
const ObjectMeta = msg({
  1: f('name', 'string'), 2: f('generateName', 'string'), 3: f('namespace', 'string'), 4: f('selfLink', 'string'), 5: f('uid', 'string'),
  6: f('resourceVersion', 'string'), 7: f('generation', 'varint'), 8: f('creationTimestamp', Time), 9: f('deletionTimestamp', Time),
  10: f('deletionGracePeriodSeconds', 'varint'), 11: f('labels', { map: 'string' }), 12: f('annotations', { map: 'string' }),
  13: f('ownerReferences', OwnerReference, true), 14: f('finalizers', 'string', true),
});
const ResourceAttributes = msg({ 1: f('namespace', 'string'), 2: f('verb', 'string'), 3: f('group', 'string'), 4: f('version', 'string'), 5: f('resource', 'string'), 6: f('subresource', 'string'), 7: f('name', 'string') });
const NonResourceAttributes = msg({ 1: f('path', 'string'), 2: f('verb', 'string') });
const ExtraValue = msg({ 1: f('items', 'string', true) });
const SelfSubjectAccessReviewSpec = msg({ 1: f('resourceAttributes', ResourceAttributes), 2: f('nonResourceAttributes', NonResourceAttributes) });
const SubjectAccessReviewSpec = msg({ 1: f('resourceAttributes', ResourceAttributes), 2: f('nonResourceAttributes', NonResourceAttributes), 3: f('user', 'string'), 4: f('groups', 'string', true), 5: f('extra', { map: ExtraValue }), 6: f('uid', 'string') });
const PolicyRule = msg({ 1: f('verbs', 'string', true), 2: f('apiGroups', 'string', true), 3: f('resources', 'string', true), 4: f('resourceNames', 'string', true), 5: f('nonResourceURLs', 'string', true) });
const LabelSelectorRequirement = msg({ 1: f('key', 'string'), 2: f('operator', 'string'), 3: f('values', 'string', true) });
const LabelSelector = msg({ 1: f('matchLabels', { map: 'string' }), 2: f('matchExpressions', LabelSelectorRequirement, true) });
const Subject = msg({ 1: f('kind', 'string'), 2: f('apiGroup', 'string'), 3: f('name', 'string'), 4: f('namespace', 'string') });
const RoleRef = msg({ 1: f('apiGroup', 'string'), 2: f('kind', 'string'), 3: f('name', 'string') });
const ObjectReference = msg({ 1: f('kind', 'string'), 2: f('namespace', 'string'), 3: f('name', 'string'), 4: f('uid', 'string'), 5: f('apiVersion', 'string'), 6: f('resourceVersion', 'string'), 7: f('fieldPath', 'string') });
const LocalObjectReference = msg({ 1: f('name', 'string') });
const BoundObjectReference = msg({ 1: f('kind', 'string'), 2: f('apiVersion', 'string'), 3: f('name', 'string'), 4: f('uid', 'string') });

/** Top-level messages by `group/kind` (group "" for core). Field 1 is always metadata. */
const MESSAGES: Readonly<Record<string, MessageSpec>> = {
  'authorization.k8s.io/SelfSubjectAccessReview': msg({ 1: f('metadata', ObjectMeta), 2: f('spec', SelfSubjectAccessReviewSpec) }),
  'authorization.k8s.io/SubjectAccessReview': msg({ 1: f('metadata', ObjectMeta), 2: f('spec', SubjectAccessReviewSpec) }),
  'authorization.k8s.io/LocalSubjectAccessReview': msg({ 1: f('metadata', ObjectMeta), 2: f('spec', SubjectAccessReviewSpec) }),
  'authorization.k8s.io/SelfSubjectRulesReview': msg({ 1: f('metadata', ObjectMeta), 2: f('spec', msg({ 1: f('namespace', 'string') })) }),
  'authentication.k8s.io/SelfSubjectReview': msg({ 1: f('metadata', ObjectMeta) }),
  'authentication.k8s.io/TokenReview': msg({ 1: f('metadata', ObjectMeta), 2: f('spec', msg({ 1: f('token', 'string'), 2: f('audiences', 'string', true) })) }),
  'authentication.k8s.io/TokenRequest': msg({
    1: f('metadata', ObjectMeta),
    2: f('spec', msg({ 1: f('audiences', 'string', true), 3: f('boundObjectRef', BoundObjectReference), 4: f('expirationSeconds', 'varint') })),
  }),
  '/Namespace': msg({ 1: f('metadata', ObjectMeta), 2: f('spec', msg({ 1: f('finalizers', 'string', true) })) }),
  '/ConfigMap': msg({ 1: f('metadata', ObjectMeta), 2: f('data', { map: 'string' }), 3: f('binaryData', { map: 'bytes' }), 4: f('immutable', 'bool') }),
  '/Secret': msg({ 1: f('metadata', ObjectMeta), 2: f('data', { map: 'bytes' }), 3: f('type', 'string'), 4: f('stringData', { map: 'string' }), 5: f('immutable', 'bool') }),
  '/ServiceAccount': msg({ 1: f('metadata', ObjectMeta), 2: f('secrets', ObjectReference, true), 3: f('imagePullSecrets', LocalObjectReference, true), 4: f('automountServiceAccountToken', 'bool') }),
  'rbac.authorization.k8s.io/Role': msg({ 1: f('metadata', ObjectMeta), 2: f('rules', PolicyRule, true) }),
  'rbac.authorization.k8s.io/ClusterRole': msg({ 1: f('metadata', ObjectMeta), 2: f('rules', PolicyRule, true), 3: f('aggregationRule', msg({ 1: f('clusterRoleSelectors', LabelSelector, true) })) }),
  'rbac.authorization.k8s.io/RoleBinding': msg({ 1: f('metadata', ObjectMeta), 2: f('subjects', Subject, true), 3: f('roleRef', RoleRef) }),
  'rbac.authorization.k8s.io/ClusterRoleBinding': msg({ 1: f('metadata', ObjectMeta), 2: f('subjects', Subject, true), 3: f('roleRef', RoleRef) }),
};

const MAGIC = [0x6b, 0x38, 0x73, 0x00];

class Reader {
  pos = 0;
  constructor(readonly buf: Uint8Array) {}
  get done(): boolean {
    return this.pos >= this.buf.length;
  }
  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= this.buf.length) throw new Error('truncated varint');
      const byte = this.buf[this.pos++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 63n) throw new Error('varint too long');
    }
  }
  bytes(): Uint8Array {
    const length = Number(this.varint());
    if (this.pos + length > this.buf.length) throw new Error('truncated field');
    const out = this.buf.subarray(this.pos, this.pos + length);
    this.pos += length;
    return out;
  }
  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.pos += 8;
    else if (wireType === 2) this.bytes();
    else if (wireType === 5) this.pos += 4;
    else throw new Error(`unsupported wire type ${wireType}`);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function decodeMessage(buf: Uint8Array, spec: MessageSpec): JsonObject {
  const out: JsonObject = {};
  const reader = new Reader(buf);
  while (!reader.done) {
    const tag = Number(reader.varint());
    const number = tag >>> 3;
    const wireType = tag & 7;
    const field = spec.fields[number];
    if (!field) {
      reader.skip(wireType);
      continue;
    }
    const value = decodeValue(reader, wireType, field.type);
    if (isMapSpec(field.type)) {
      const [k, v] = value as [string, unknown];
      ((out[field.name] ??= {}) as JsonObject)[k] = v;
    } else if (field.repeated) {
      ((out[field.name] ??= []) as unknown[]).push(value);
    } else {
      out[field.name] = value;
    }
  }
  return out;
}

function isMapSpec(type: FieldSpec['type']): type is MapSpec {
  return typeof type === 'object' && 'map' in type;
}

function decodeValue(reader: Reader, wireType: number, type: FieldSpec['type']): unknown {
  if (isMapSpec(type)) {
    const entry = decodeMessage(reader.bytes(), msg({ 1: f('key', 'string'), 2: f('value', type.map) }));
    return [String(entry.key ?? ''), entry.value ?? (type.map === 'string' || type.map === 'bytes' ? '' : {})];
  }
  if (typeof type === 'object') {
    const decoded = decodeMessage(reader.bytes(), type);
    if (type === Time) return decoded.seconds === undefined ? null : new Date(Number(decoded.seconds) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    if (type === ExtraValue) return decoded.items ?? [];
    return decoded;
  }
  switch (type) {
    case 'string':
      if (wireType !== 2) throw new Error('string field with a non-length wire type');
      return utf8.decode(reader.bytes());
    case 'bytes':
      return Buffer.from(reader.bytes()).toString('base64');
    case 'bool':
      return reader.varint() !== 0n;
    case 'varint':
      return Number(BigInt.asIntN(64, reader.varint()));
  }
}

/**
 * Decode a Kubernetes protobuf body into the JSON object it stands for. Kinds without a field table
 * answer 415 with upstream's text (kubectl only sends the kinds listed above).
 */
export function decodeProtobufObject(body: Uint8Array): JsonObject {
  if (body.length < 4 || MAGIC.some((b, i) => body[i] !== b)) throw badRequest('provided protobuf body does not start with the Kubernetes magic prefix "k8s\\x00"');
  let unknown: JsonObject;
  try {
    unknown = decodeMessage(body.subarray(4), msg({ 1: f('typeMeta', msg({ 1: f('apiVersion', 'string'), 2: f('kind', 'string') })), 2: f('raw', 'bytes'), 3: f('contentEncoding', 'string'), 4: f('contentType', 'string') }));
  } catch (error) {
    throw badRequest(`unable to decode protobuf body: ${(error as Error).message}`);
  }
  const typeMeta = (unknown.typeMeta ?? {}) as { apiVersion?: string; kind?: string };
  const apiVersion = typeMeta.apiVersion ?? '';
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const spec = MESSAGES[`${group}/${typeMeta.kind ?? ''}`];
  if (!spec) throw unsupportedMediaType();
  try {
    const raw = Buffer.from(String(unknown.raw ?? ''), 'base64');
    const object = decodeMessage(raw, spec);
    return { apiVersion, kind: typeMeta.kind, ...object, metadata: (object.metadata as JsonObject | undefined) ?? {} };
  } catch (error) {
    throw badRequest(`unable to decode protobuf body: ${(error as Error).message}`);
  }
}
