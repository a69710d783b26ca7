/**
 * The cluster API server: one HTTPS listener running the request pipeline of DESIGN.md —
 * TLS → authenticate → impersonate → authorize → (admission, inside the registry) → registry —
 * and answering every failure as a Kubernetes `Status` (toStatus, the one translation point).
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Storage } from '../storage/types.js';
import { createHttpServer, HttpError, listen, type FastifyInstance, type FastifyReply, type FastifyRequest, type Listening, type ListenOptions, type TlsOptions } from '../common/http.js';
import type { Logger } from '../common/log.js';
import { AdmissionChain, type AdmissionPlugin } from './admission.js';
import { WebhookAdmission } from './webhooks/dispatcher.js';
import { serviceAccountAdmission } from './serviceaccount-admission.js';
import { aggregatedContentType, aggregatedVersionAccepted, buildDiscovery, type DiscoveryDocuments } from './api/discovery.js';
import { buildOpenApiV3, OPENAPI_V2_BODY, OPENAPI_V2_CONTENT_TYPE, type OpenApiV3 } from './api/openapi.js';
import { requestInfo, type RequestInfo } from './api/requestinfo.js';
import { AuthenticationError, buildAuthenticator, type Authenticator, type AuthenticatorConfig, type ServiceAccountTokenIssuer, type UserInfo } from './authn/index.js';
import { buildAuthorizer, checkEscalation, forbiddenError, ForbiddenError, ImpersonationRequestError, impersonate, InvalidReviewError, BadReviewRequestError, NodeGraph, RbacIndex, RoleRefNotFoundError, type Attributes, type AuthorizerChain } from './authz/index.js';
import { Controllers } from './controllers.js';
import { badRequest, internalError, pathNotFound, StatusError, tooLarge, unauthorized } from './errors.js';
import type { ValueTransformer } from './registry/encryption.js';
import { Registry } from './registry/registry.js';
import { defaultResourceTable, type ResourceTable } from './resources/index.js';
import { ResourceHandlers, type ApiRequest } from './rest.js';

/** What `/version` reports. The minor decides which kubectl the gcloud dispatcher runs (G1). */
export const SERVER_VERSION = {
  major: '1',
  minor: '33',
  gitVersion: 'v1.33.0',
  gitCommit: 'portcullis',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: 'go1.24.0',
  compiler: 'gc',
  platform: 'linux/amd64',
} as const;

/** Largest request body (upstream's 3 MiB limit for writes). */
export const MAX_REQUEST_BODY = 3 * 1024 * 1024;

export interface ClusterServerOptions {
  readonly storage: Storage;
  readonly logger: Logger;
  readonly tls: TlsOptions;
  /** Token file, basic-auth file, client CA, anonymous: A's authenticator config without service accounts (added here). */
  readonly authentication: Omit<AuthenticatorConfig, 'serviceAccounts'>;
  /** `--authorization-mode`. */
  readonly authorizationModes: readonly string[];
  readonly tokenIssuer: ServiceAccountTokenIssuer;
  /** Encryption at rest of Secrets (AesGcmTransformer.open(dataDir)); without it they are stored as JSON. */
  readonly encryption?: ValueTransformer;
  readonly bodyLimit?: number;
}

export interface ClusterServer {
  readonly url: string;
  readonly port: number;
  readonly registry: Registry;
  readonly rbac: RbacIndex;
  close(): Promise<void>;
}

interface Pipeline {
  readonly authenticator: Authenticator;
  readonly authorizer: AuthorizerChain;
}

/** Build, bootstrap (namespaces, policy) and start listening. Resolves once the RBAC index is filled. */
export async function startClusterServer(options: ClusterServerOptions, where: ListenOptions): Promise<ClusterServer> {
  const resources = defaultResourceTable();
  const rbac = new RbacIndex();
  const nodes = new NodeGraph();
  const authorizer = buildAuthorizer(options.authorizationModes, rbac, options.authorizationModes.some((m) => m.split(',').includes('Node')) ? nodes : undefined);
  // Credentials files are read first: a bad one stops start-up before anything runs.
  const serviceAccounts = resources.lookup('', 'v1', 'serviceaccounts')!;
  const boundKinds = { Pod: resources.lookup('', 'v1', 'pods')!, Secret: resources.lookup('', 'v1', 'secrets')!, Node: resources.lookup('', 'v1', 'nodes')! };
  const authenticator = await buildAuthenticator({
    ...options.authentication,
    warn: (message) => options.logger.warn(message),
    serviceAccounts: {
      issuer: options.tokenIssuer.issuer,
      apiAudiences: options.tokenIssuer.apiAudiences,
      verificationKeys: [options.tokenIssuer.publicKey],
      isActive: async (namespace, name, uid) => (await registry.store(serviceAccounts).find(namespace, name))?.metadata.uid === uid,
      // A token bound to a pod, secret or node dies with that object (the same uid, still there).
      isBoundObjectActive: async (namespace, ref) => {
        const type = boundKinds[ref.kind];
        return (await registry.store(type).find(type.namespaced ? namespace : '', ref.name))?.metadata.uid === ref.uid;
      },
    },
  });
  const escalation: AdmissionPlugin = {
    name: 'RBACEscalation',
    async validate(attributes) {
      if (attributes.type.group !== 'rbac.authorization.k8s.io' || !attributes.object) return;
      checkEscalation(attributes.user, attributes.object, authorizer, rbac, attributes.oldObject);
    },
  };
  // Dynamic admission runs as upstream's default plugins do: mutating webhooks first, then the
  // built-in validation, then validating webhooks (kube.md §6.6).
  const webhooks = await WebhookAdmission.start({ storage: options.storage, resources, logger: options.logger });
  // The plugin reads through the registry that its chain belongs to; it runs only after both exist.
  const accounts = serviceAccountAdmission({
    exists: async (namespace, name) => (await registry.store(serviceAccounts).find(namespace, name)) !== undefined,
    ensureDefault: (namespace) => controllers.ensureDefaultServiceAccount(namespace),
  });
  const registry = new Registry(options.storage, resources, new AdmissionChain([webhooks.mutating, escalation, accounts, webhooks.validating]), options.encryption);
  const controllers = new Controllers(registry, rbac, nodes, options.logger);

  const pipeline: Pipeline = { authenticator, authorizer };
  const handlers = new ResourceHandlers(registry, { authenticator, authorizer, rbac, tokenIssuer: options.tokenIssuer });
  const server = createApiServer(options, pipeline, resources, handlers);
  let listening: Listening;
  try {
    await controllers.start();
    listening = await listen(server, where);
  } catch (error) {
    controllers.stop();
    webhooks.close();
    await server.close();
    throw error;
  }
  return {
    url: listening.url,
    port: listening.port,
    registry,
    rbac,
    async close() {
      controllers.stop();
      webhooks.close();
      handlers.closeWatches();
      await server.close();
    },
  };
}

function createApiServer(options: ClusterServerOptions, pipeline: Pipeline, resources: ResourceTable, handlers: ResourceHandlers): FastifyInstance {
  const bodyLimit = options.bodyLimit ?? MAX_REQUEST_BODY;
  const server = createHttpServer({ logger: options.logger, tls: options.tls, bodyLimit, errorResponse: (error) => toStatusResponse(error, bodyLimit) });
  const discovery = buildDiscovery(resources);
  const openapi = buildOpenApiV3(resources, SERVER_VERSION.gitVersion);
  server.route({
    method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    url: '/*',
    handler: async (request, reply) => {
      const url = new URL(request.url, 'https://localhost');
      const user = await authenticate(pipeline.authenticator, request.raw);
      const effective = impersonated(user, request.raw, pipeline.authorizer);
      const info = requestInfo(request.method, url.pathname, url.searchParams);
      authorize(pipeline.authorizer, effective, info);
      if (!info.resourceRequest) return nonResource(info, url, request, reply, discovery, openapi);
      const api: ApiRequest = { info, query: url.searchParams, user: effective, headers: request.headers, body: request.body as Buffer | undefined, raw: request.raw, reply };
      return handlers.handle(api);
    },
  });
  return server;
}

async function authenticate(authenticator: Authenticator, raw: IncomingMessage): Promise<UserInfo> {
  const socket = raw.socket as TLSSocket;
  const peer = typeof socket.getPeerCertificate === 'function' ? socket.getPeerCertificate(true) : undefined;
  const tls = peer && Object.keys(peer).length > 0
    ? { authorized: socket.authorized === true, ...(socket.authorizationError ? { authorizationError: String(socket.authorizationError) } : {}), peerCertificate: peer }
    : undefined;
  try {
    const result = await authenticator.authenticate({ headers: raw.headers, ...(tls ? { tls } : {}) });
    if (!result) throw unauthorized();
    return result.user;
  } catch (error) {
    if (error instanceof AuthenticationError) throw unauthorized();
    throw error;
  }
}

function impersonated(user: UserInfo, raw: IncomingMessage, authorizer: AuthorizerChain): UserInfo {
  // headersDistinct keeps repeated Impersonate-Group lines apart (G8).
  return impersonate(user, raw.headersDistinct, authorizer) ?? user;
}

function authorize(authorizer: AuthorizerChain, user: UserInfo, info: RequestInfo): void {
  const attributes: Attributes = {
    user,
    verb: info.verb,
    resourceRequest: info.resourceRequest,
    path: info.path,
    namespace: info.namespace,
    apiGroup: info.apiGroup,
    apiVersion: info.apiVersion,
    resource: info.resource,
    subresource: info.subresource,
    name: info.name,
  };
  const result = authorizer.authorize(attributes);
  if (result.decision !== 'allow') throw forbiddenError(attributes, result.reason);
}

const HEALTH_CHECKS = ['ping', 'log', 'etcd', 'poststarthook/rbac/bootstrap-roles'];

async function nonResource(info: RequestInfo, url: URL, request: FastifyRequest, reply: FastifyReply, discovery: DiscoveryDocuments, openapi: OpenApiV3): Promise<unknown> {
  if (request.method !== 'GET' && request.method !== 'HEAD') throw pathNotFound();
  const path = info.path.replace(/\/+$/, '') || '/';
  const json = (body: unknown, type = 'application/json') => reply.code(200).header('content-type', type).send(Buffer.from(JSON.stringify(body)));
  if (path === '/version') return json(SERVER_VERSION);
  const health = /^\/(healthz|livez|readyz)(?:\/(.+))?$/.exec(path);
  if (health) {
    const check = health[2];
    if (check && !HEALTH_CHECKS.includes(check)) throw pathNotFound();
    const verbose = url.searchParams.has('verbose');
    const text = check ? 'ok' : verbose ? `${HEALTH_CHECKS.map((c) => `[+]${c} ok`).join('\n')}\n${health[1]} check passed\n` : 'ok';
    return reply.code(200).header('content-type', 'text/plain; charset=utf-8').header('x-content-type-options', 'nosniff').send(Buffer.from(text));
  }
  const aggregated = aggregatedVersionAccepted(request.headers.accept);
  if (path === '/api') {
    if (aggregated) return json(discovery.aggregated('api', aggregated), aggregatedContentType(aggregated));
    const host = request.headers.host ?? '';
    return json({ ...discovery.coreVersions, serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: host }] });
  }
  if (path === '/apis') {
    if (aggregated) return json(discovery.aggregated('apis', aggregated), aggregatedContentType(aggregated));
    return json(discovery.groupList);
  }
  const groupVersion = /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))$/.exec(path);
  if (groupVersion) {
    const key = groupVersion[1] ?? `${groupVersion[2]}/${groupVersion[3]}`;
    const list = discovery.resourceLists.get(key);
    if (!list) throw pathNotFound();
    return json(list);
  }
  const group = /^\/apis\/([^/]+)$/.exec(path);
  if (group) {
    const doc = discovery.groups.get(group[1]!);
    if (!doc) throw pathNotFound();
    return json(doc);
  }
  if (path === '/openapi/v2') return reply.code(200).header('content-type', OPENAPI_V2_CONTENT_TYPE).send(OPENAPI_V2_BODY);
  if (path === '/openapi/v3') return json(openapi.root);
  const v3 = /^\/openapi\/v3\/(.+)$/.exec(path);
  if (v3) {
    const doc = openapi.documents.get(v3[1]!);
    if (!doc) throw pathNotFound();
    return json(doc);
  }
  throw pathNotFound();
}

/** The one place where any failure becomes a Kubernetes Status on the wire. */
export function toStatus(error: unknown, bodyLimit: number): StatusError {
  if (error instanceof StatusError) return error;
  if (error instanceof ForbiddenError) {
    const d = error.details;
    return new StatusError(403, 'Forbidden', error.message, d.resource ? { ...(d.name ? { name: d.name } : {}), ...(d.group ? { group: d.group } : {}), kind: d.resource } : undefined);
  }
  if (error instanceof RoleRefNotFoundError) return new StatusError(404, 'NotFound', error.message, { name: error.roleName, group: error.group, kind: `${error.resource}s` });
  if (error instanceof InvalidReviewError) {
    return new StatusError(422, 'Invalid', error.message, { group: error.group, kind: error.kind, causes: error.causes.map((c) => ({ reason: c.reason, message: c.message, field: c.field })) });
  }
  if (error instanceof BadReviewRequestError) return badRequest(error.message);
  if (error instanceof ImpersonationRequestError) return internalError(error.message);
  if (error instanceof HttpError) {
    if (error.statusCode === 413) return tooLarge(bodyLimit);
    if (error.statusCode === 404) return pathNotFound();
    if (error.statusCode === 400) return badRequest(error.message);
    return new StatusError(error.statusCode, '', error.message);
  }
  return internalError(error instanceof Error ? error.message : String(error), { cause: error });
}

function toStatusResponse(error: unknown, bodyLimit: number) {
  const status = toStatus(error, bodyLimit);
  return { statusCode: status.code, body: Buffer.from(JSON.stringify(status.status)), headers: { 'content-type': 'application/json' } };
}
