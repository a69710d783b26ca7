/**
 * The review APIs (kube.md §4) as pure functions from the request body to the response object;
 * M's create handlers call them and answer 201. They share the server's authenticator and
 * authorizer, so `kubectl auth can-i` / `whoami` see exactly what requests see.
 */
import { Anonymous, type Authenticator, type UserInfo } from '../authn/types.js';
import type { Attributes, Authorizer, RuleResolver } from './types.js';

type Json = Record<string, unknown>;

/** One field error of a 422 Invalid (upstream field.Error). */
export interface FieldCause {
  readonly reason: 'FieldValueInvalid' | 'FieldValueRequired';
  readonly field: string;
  readonly message: string;
}

/** 422 Invalid: `<Kind>.<group> "" is invalid: <cause>` (several causes in brackets). */
export class InvalidReviewError extends Error {
  constructor(
    readonly group: string,
    readonly kind: string,
    readonly causes: readonly FieldCause[],
  ) {
    const text = causes.map((c) => `${c.field}: ${c.message}`);
    super(`${kind}.${group} "" is invalid: ${text.length === 1 ? text[0] : `[${text.join(', ')}]`}`);
    this.name = 'InvalidReviewError';
  }
}

/** 400 BadRequest with this message. */
export class BadReviewRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BadReviewRequestError';
  }
}

const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const present = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

const AuthorizationGroup = 'authorization.k8s.io';

/** Go's `%#v` of the internal attribute structs, as upstream's field errors print them. */
function goValue(kind: 'ResourceAttributes' | 'NonResourceAttributes', value: Json | undefined): string {
  if (!value) return 'null';
  const fields =
    kind === 'NonResourceAttributes'
      ? [['Path', value['path']], ['Verb', value['verb']]]
      : [['Namespace', value['namespace']], ['Verb', value['verb']], ['Group', value['group']], ['Version', value['version']], ['Resource', value['resource']], ['Subresource', value['subresource']], ['Name', value['name']]];
  return `authorization.${kind}{${fields.map(([k, v]) => `${k}:${JSON.stringify(str(v))}`).join(', ')}}`;
}

function attributeCauses(spec: Json): FieldCause[] {
  const resource = present(spec['resourceAttributes']) ? spec['resourceAttributes'] : undefined;
  const nonResource = present(spec['nonResourceAttributes']) ? spec['nonResourceAttributes'] : undefined;
  if (resource && nonResource) {
    return [{ reason: 'FieldValueInvalid', field: 'spec.nonResourceAttributes', message: `Invalid value: ${goValue('NonResourceAttributes', nonResource)}: cannot be specified in combination with resourceAttributes` }];
  }
  if (!resource && !nonResource) {
    return [{ reason: 'FieldValueInvalid', field: 'spec.resourceAttributes', message: 'Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified' }];
  }
  return [];
}

function attributesFrom(user: UserInfo, spec: Json): Attributes {
  const resource = present(spec['resourceAttributes']) ? spec['resourceAttributes'] : undefined;
  if (resource) {
    return {
      user,
      verb: str(resource['verb']),
      resourceRequest: true,
      path: '',
      namespace: str(resource['namespace']),
      apiGroup: str(resource['group']),
      apiVersion: str(resource['version']) || '*',
      resource: str(resource['resource']),
      subresource: str(resource['subresource']),
      name: str(resource['name']),
    };
  }
  const nonResource = obj(spec['nonResourceAttributes']);
  return { user, verb: str(nonResource['verb']), resourceRequest: false, path: str(nonResource['path']), namespace: '', apiGroup: '', apiVersion: '', resource: '', subresource: '', name: '' };
}

function respond(body: Json, kind: string, defaultApiVersion: string, status: Json, spec?: Json): Json {
  return {
    kind,
    apiVersion: str(body['apiVersion']) || defaultApiVersion,
    metadata: { creationTimestamp: null, ...obj(body['metadata']) },
    spec: spec ?? obj(body['spec']),
    status,
  };
}

function accessStatus(attributes: Attributes, authorizer: Authorizer): Json {
  const result = authorizer.authorize(attributes);
  return {
    allowed: result.decision === 'allow',
    ...(result.decision === 'deny' ? { denied: true } : {}),
    ...(result.reason ? { reason: result.reason } : {}),
  };
}

/** SelfSubjectAccessReview: may the caller do this? (`kubectl auth can-i`). */
export function reviewSelfSubjectAccess(user: UserInfo, body: object, authorizer: Authorizer): object {
  const spec = obj((body as Json)['spec']);
  const causes = attributeCauses(spec);
  if (causes.length) throw new InvalidReviewError(AuthorizationGroup, 'SelfSubjectAccessReview', causes);
  return respond(body as Json, 'SelfSubjectAccessReview', `${AuthorizationGroup}/v1`, accessStatus(attributesFrom(user, spec), authorizer));
}

/** The user a SubjectAccessReview asks about (v1beta1 names the groups field `group`). */
function subjectOf(spec: Json): UserInfo {
  const extra = obj(spec['extra']);
  const groups = strings(spec['groups']).length ? strings(spec['groups']) : strings(spec['group']);
  return {
    name: str(spec['user']),
    ...(str(spec['uid']) ? { uid: str(spec['uid']) } : {}),
    groups,
    ...(Object.keys(extra).length ? { extra: Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, strings(v)])) } : {}),
  };
}

function subjectCauses(spec: Json): FieldCause[] {
  const causes = attributeCauses(spec);
  const subject = subjectOf(spec);
  if (subject.name === '' && subject.groups.length === 0) {
    causes.push({ reason: 'FieldValueInvalid', field: 'spec.user', message: 'Invalid value: "": at least one of user or group must be specified' });
  }
  return causes;
}

/** SubjectAccessReview: may this user (from the spec) do this? */
export function reviewSubjectAccess(body: object, authorizer: Authorizer): object {
  const spec = obj((body as Json)['spec']);
  const causes = subjectCauses(spec);
  if (causes.length) throw new InvalidReviewError(AuthorizationGroup, 'SubjectAccessReview', causes);
  return respond(body as Json, 'SubjectAccessReview', `${AuthorizationGroup}/v1`, accessStatus(attributesFrom(subjectOf(spec), spec), authorizer));
}

/** LocalSubjectAccessReview: a SubjectAccessReview confined to the URL's namespace. */
export function reviewLocalSubjectAccess(namespace: string, body: object, authorizer: Authorizer): object {
  const spec = obj((body as Json)['spec']);
  const causes = subjectCauses(spec);
  if (present(spec['nonResourceAttributes'])) {
    causes.push({ reason: 'FieldValueInvalid', field: 'spec.nonResourceAttributes', message: `Invalid value: ${goValue('NonResourceAttributes', spec['nonResourceAttributes'])}: disallowed on this kind of request` });
  }
  if (causes.length) throw new InvalidReviewError(AuthorizationGroup, 'LocalSubjectAccessReview', causes);
  const requested = str(obj(spec['resourceAttributes'])['namespace']);
  if (requested !== namespace) throw new BadReviewRequestError(`spec.resourceAttributes.namespace must match namespace: ${namespace}`);
  const metadata = { ...obj((body as Json)['metadata']), namespace };
  return respond({ ...(body as Json), metadata }, 'LocalSubjectAccessReview', `${AuthorizationGroup}/v1`, accessStatus(attributesFrom(subjectOf(spec), spec), authorizer));
}

/** SelfSubjectRulesReview: everything the caller may do in `spec.namespace` (`kubectl auth can-i --list`). */
export function reviewSelfSubjectRules(user: UserInfo, body: object, resolver: RuleResolver): object {
  const spec = obj((body as Json)['spec']);
  const namespace = str(spec['namespace']);
  if (namespace === '') throw new BadReviewRequestError('no namespace on request');
  const rules = resolver.rulesFor(user, namespace);
  return respond(body as Json, 'SelfSubjectRulesReview', `${AuthorizationGroup}/v1`, {
    resourceRules: rules.resourceRules,
    nonResourceRules: rules.nonResourceRules,
    incomplete: rules.incomplete,
    ...(rules.evaluationError ? { evaluationError: rules.evaluationError } : {}),
  });
}

export function userInfoJson(user: UserInfo): Json {
  return {
    username: user.name,
    ...(user.uid ? { uid: user.uid } : {}),
    groups: [...user.groups],
    ...(user.extra && Object.keys(user.extra).length ? { extra: user.extra } : {}),
  };
}

/**
 * TokenReview: authenticates `spec.token` as a bearer token (for `spec.audiences`, or the
 * server's own when empty) through the server's authenticator.
 */
export async function reviewToken(body: object, authenticator: Authenticator): Promise<object> {
  const spec = obj((body as Json)['spec']);
  const token = str(spec['token']);
  if (token === '') throw new BadReviewRequestError('token is required for TokenReview in authentication');
  const audiences = strings(spec['audiences']);
  let status: Json;
  try {
    const result = await authenticator.authenticate({ headers: { authorization: `Bearer ${token}` }, ...(audiences.length ? { audiences } : {}) });
    // Only a token authenticator may vouch for the token; the anonymous fallback never does.
    status = result && result.user.name !== Anonymous
      ? { authenticated: true, user: userInfoJson(result.user), ...(audiences.length ? { audiences: [...(result.audiences ?? audiences)] } : {}) }
      : { authenticated: false, user: {} };
  } catch (error) {
    status = { authenticated: false, user: {}, error: error instanceof Error ? error.message : String(error) };
  }
  return respond(body as Json, 'TokenReview', 'authentication.k8s.io/v1', status);
}

/** SelfSubjectReview (`kubectl auth whoami`), in the version asked for: `authentication.k8s.io/v1` or `/v1beta1`. */
export function selfSubjectReview(user: UserInfo, apiVersion = 'authentication.k8s.io/v1'): object {
  return { kind: 'SelfSubjectReview', apiVersion, metadata: { creationTimestamp: null }, status: { userInfo: userInfoJson(user) } };
}
