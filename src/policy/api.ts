/**
 * OPA's REST API on a fastify server: the Policy, Data, Query, default-decision (`POST /`),
 * `/v0/data`, Health, Config, Status and Prometheus endpoints. The route table lists every path
 * with the methods it answers; any other method on a known path is 405 with an empty body, as OPA's
 * router answers. Handlers take the store's current snapshot once and answer from it alone.
 */
import type { FastifyInstance } from '../common/http.js';
import { RegoErrors, type PreparedQuery, type QueryResult } from '../rego/index.js';
import type { ConfigObject, PolicyConfig } from './config.js';
import { reportedConfig } from './config.js';
import { DecisionLogger } from './decision-log.js';
import type { Json } from './data-tree.js';
import { ApiError, Code, Message, errorResponse } from './errors.js';
import { installDecisionFastPath } from './fast-path.js';
import { NO_METRICS, RequestMetrics, type ServerMetrics } from './metrics.js';
import {
  bodyBytes, explainMode, flag, isYaml, lastParam, parseDocument, pathAfter, rawRemainder, sendJson,
  type ApiReply, type ApiRequest, type ExplainMode, type Query,
} from './requests.js';
import { authorizationInput, authorizerReadsBody, authorize, bearerIdentity, type AuthenticationMode, type AuthorizationMode } from './security.js';
import type { DataOperation, PolicyStore, Snapshot } from './store.js';

export interface ApiOptions {
  readonly store: PolicyStore;
  readonly config: PolicyConfig;
  readonly rawConfig: ConfigObject;
  readonly version: string;
  /** `labels.id` of status, config and decision logs. */
  readonly instanceId: string;
  readonly metrics: ServerMetrics;
  readonly decisionLog?: DecisionLogger;
  readonly authentication: AuthenticationMode;
  readonly authorization: AuthorizationMode;
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type Handler = (request: ApiRequest, reply: ApiReply) => Promise<unknown> | unknown;

const ALL_METHODS: Method[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
/** Bodies the authorizer has already parsed, for the handler to reuse. */
const parsedBodies = new WeakMap<ApiRequest, { value: unknown }>();

export function registerApi(server: FastifyInstance, options: ApiOptions): void {
  const api = new PolicyApi(options);
  const table: Array<{ url: string; handler: string; methods: Partial<Record<Method, Handler>> }> = [
    { url: '/', handler: 'index', methods: { POST: api.defaultDecision } },
    { url: '/v0/data', handler: 'v0/data', methods: { POST: api.v0Data } },
    { url: '/v0/data/*', handler: 'v0/data', methods: { POST: api.v0Data } },
    { url: '/v1/data', handler: 'v1/data', methods: { GET: api.dataGet, POST: api.dataPost, PUT: api.dataPut, PATCH: api.dataPatch, DELETE: api.dataDelete } },
    { url: '/v1/data/*', handler: 'v1/data', methods: { GET: api.dataGet, POST: api.dataPost, PUT: api.dataPut, PATCH: api.dataPatch, DELETE: api.dataDelete } },
    { url: '/v1/policies', handler: 'v1/policies', methods: { GET: api.policyList } },
    { url: '/v1/policies/*', handler: 'v1/policies', methods: { GET: api.policyGet, PUT: api.policyPut, DELETE: api.policyDelete } },
    { url: '/v1/query', handler: 'v1/query', methods: { GET: api.queryGet, POST: api.queryPost } },
    { url: '/health', handler: 'health', methods: { GET: api.health } },
    { url: '/health/*', handler: 'health', methods: { GET: api.healthPolicy } },
    { url: '/v1/config', handler: 'v1/config', methods: { GET: api.configGet } },
    { url: '/v1/status', handler: 'v1/status', methods: { GET: api.statusGet } },
    { url: '/metrics', handler: 'metrics', methods: { GET: api.prometheus } },
  ];
  for (const route of table) {
    server.route({
      method: ALL_METHODS,
      url: route.url,
      config: { handler: route.handler },
      handler: (request, reply) => {
        // As Go's router: a GET route answers HEAD too; other methods get an empty 405.
        const handle = route.methods[(request.method === 'HEAD' ? 'GET' : request.method) as Method];
        if (!handle) return reply.code(405).send();
        return handle(request, reply);
      },
    });
  }
  server.addHook('onResponse', async (request, reply) => {
    const handler = (request.routeOptions.config as { handler?: string } | undefined)?.handler ?? 'notfound';
    options.metrics.observe(handler, request.method, reply.statusCode, reply.elapsedTime / 1000);
  });
  if (options.authorization === 'basic') {
    server.addHook('preHandler', async (request) => api.secure(request));
  } else {
    installDecisionFastPath(server, api.dataPost, { bodyLimit: options.config.maxBodyBytes, metrics: options.metrics, errorResponse });
  }
}

interface EvalParams {
  readonly snapshot: Snapshot;
  readonly path: readonly string[];
  readonly input: unknown;
  readonly query: Query;
  readonly metrics: RequestMetrics;
}

class PolicyApi {
  constructor(private readonly options: ApiOptions) {}

  // --- security ---

  readonly secure = async (request: ApiRequest): Promise<void> => {
    // The identity only means something to the authorization policy (as in OPA).
    if (this.options.authorization !== 'basic') return;
    const identity = this.options.authentication === 'token' ? bearerIdentity(request) : undefined;
    const segments = request.url.split('?')[0] === '/' ? [''] : pathAfter(request, '');
    let body: unknown;
    if (authorizerReadsBody(request.method, segments)) {
      const bytes = bodyBytes(request, this.options.config.maxGzipBytes);
      if (bytes.length > 0) {
        body = parseDocument(bytes, isYaml(request), 'body contains malformed input document');
        parsedBodies.set(request, { value: body });
      }
    }
    authorize(this.options.store.current, this.options.config.defaultAuthorizationDecision, authorizationInput(request, identity, body));
  };

  // --- Data API ---

  readonly dataGet = (request: ApiRequest, reply: ApiReply) => {
    const query = request.query as Query;
    const metrics = this.requestMetrics(query);
    metrics.start('timer_server_handler_ns');
    const path = pathAfter(request, '/v1/data');
    metrics.start('timer_rego_input_parse_ns');
    const inputText = lastParam(query, 'input');
    const input = inputText === undefined ? undefined : parseDocument(Buffer.from(inputText), false, 'parameter contains malformed input document');
    metrics.stop('timer_rego_input_parse_ns');
    return this.dataResponse(request, reply, { snapshot: this.options.store.current, path, input, query, metrics }, false);
  };

  readonly dataPost = (request: ApiRequest, reply: ApiReply) => {
    const query = request.query as Query;
    const metrics = this.requestMetrics(query);
    metrics.start('timer_server_handler_ns');
    const path = pathAfter(request, '/v1/data');
    metrics.start('timer_rego_input_parse_ns');
    const body = this.body(request);
    if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body))) {
      throw ApiError.badRequest('body contains malformed input document: want a JSON object such as {"input": …}');
    }
    const input = body === undefined ? undefined : (body as { input?: unknown }).input ?? undefined;
    metrics.stop('timer_rego_input_parse_ns');
    return this.dataResponse(request, reply, { snapshot: this.options.store.current, path, input, query, metrics }, input === undefined);
  };

  private dataResponse(request: ApiRequest, reply: ApiReply, params: EvalParams, inputMissing: boolean) {
    const { snapshot, path, input, query, metrics } = params;
    const decisionId = this.options.decisionLog ? DecisionLogger.newId() : undefined;
    const explain = explainMode(query);
    let result: QueryResult;
    try {
      result = this.evaluate(params, explain);
    } catch (error) {
      this.logDecision(request, { decisionId, path, input, error, metrics, snapshot });
      throw error;
    }
    metrics.stop('timer_server_handler_ns');
    const pretty = flag(query, 'pretty');
    const response: Record<string, unknown> = {};
    if (flag(query, 'provenance')) response.provenance = this.provenance(snapshot);
    if (flag(query, 'metrics') || flag(query, 'instrument')) response.metrics = metrics.all();
    if (result.defined) response.result = result.value;
    if (inputMissing) response.warning = { code: 'api_usage_warning', message: "'input' key missing from the request" };
    if (decisionId) response.decision_id = decisionId;
    if (explain !== 'off' && result.explanation && (result.defined || explain === 'full')) response.explanation = result.explanation;
    this.logDecision(request, { decisionId, path, input, result: result.defined ? result.value : undefined, metrics, snapshot });
    return sendJson(reply, 200, response, pretty);
  }

  readonly dataPut = async (request: ApiRequest, reply: ApiReply) => {
    const query = request.query as Query;
    const metrics = this.requestMetrics(query);
    metrics.start('timer_server_handler_ns');
    metrics.start('timer_rego_input_parse_ns');
    const value = parseDocument(bodyBytes(request, this.options.config.maxGzipBytes), isYaml(request), 'body contains malformed document') as Json;
    metrics.stop('timer_rego_input_parse_ns');
    const path = pathAfter(request, '/v1/data');
    const outcome = await this.options.store.putData(path, value, request.headers['if-none-match'] === '*');
    if (outcome === 'not_modified') return reply.code(304).send('');
    return this.writeResponse(reply, query, metrics);
  };

  readonly dataPatch = async (request: ApiRequest, reply: ApiReply) => {
    const query = request.query as Query;
    const metrics = this.requestMetrics(query);
    metrics.start('timer_server_handler_ns');
    const ops = parseDocument(bodyBytes(request, this.options.config.maxGzipBytes), false, 'body contains malformed patch');
    if (!Array.isArray(ops)) throw ApiError.badRequest('body contains malformed patch: want an array of operations');
    const root = pathAfter(request, '/v1/data');
    const operations: DataOperation[] = ops.map((entry: unknown) => {
      const { op, path, value } = (entry ?? {}) as { op?: unknown; path?: unknown; value?: Json };
      if (op !== 'add' && op !== 'remove' && op !== 'replace') throw ApiError.badRequest(`bad patch operation: ${String(op ?? '')}`);
      if (typeof path !== 'string') throw ApiError.badRequest(`bad patch path: ${String(path ?? '')}`);
      return { op, path: [...root, ...patchPath(path)], value: value ?? null };
    });
    await this.options.store.patchData(operations);
    return this.writeResponse(reply, query, metrics);
  };

  readonly dataDelete = async (request: ApiRequest, reply: ApiReply) => {
    const query = request.query as Query;
    const metrics = this.requestMetrics(query);
    metrics.start('timer_server_handler_ns');
    await this.options.store.patchData([{ op: 'remove', path: pathAfter(request, '/v1/data') }]);
    return this.writeResponse(reply, query, metrics);
  };

  private writeResponse(reply: ApiReply, query: Query, metrics: RequestMetrics) {
    metrics.stop('timer_server_handler_ns');
    if (flag(query, 'metrics')) return sendJson(reply, 200, { metrics: metrics.all() });
    return reply.code(204).send();
  }

  // --- default decision and the v0 webhook API ---

  readonly defaultDecision = (request: ApiRequest, reply: ApiReply) =>
    this.bareDecision(request, reply, this.options.config.defaultDecision);

  readonly v0Data = (request: ApiRequest, reply: ApiReply) => this.bareDecision(request, reply, pathAfter(request, '/v0/data'));

  /** `POST /` and `POST /v0/data/…`: the body is the input; the answer is the bare value or 404. */
  private bareDecision(request: ApiRequest, reply: ApiReply, path: readonly string[]) {
    const query = request.query as Query;
    const metrics = this.requestMetrics(query);
    metrics.start('timer_server_handler_ns');
    let input: unknown;
    try {
      input = this.body(request);
    } catch (error) {
      if (error instanceof ApiError) throw ApiError.badRequest(`unexpected parse error for input: ${error.message.replace(/^[^:]*: /, '')}`);
      throw error;
    }
    const snapshot = this.options.store.current;
    const decisionId = this.options.decisionLog ? DecisionLogger.newId() : undefined;
    let result: QueryResult;
    try {
      result = this.evaluate({ snapshot, path, input, query, metrics }, 'off');
    } catch (error) {
      this.logDecision(request, { decisionId, path, input, error, metrics, snapshot });
      throw error;
    }
    metrics.stop('timer_server_handler_ns');
    if (!result.defined) {
      const kind = snapshot.definesDocument(path) ? Message.foundUndefined : Message.missing;
      const error = new ApiError(404, Code.undefinedDocument, `${kind}: ${dataRef(path)}`);
      this.logDecision(request, { decisionId, path, input, error: { code: error.code, message: error.message }, metrics, snapshot });
      throw error;
    }
    this.logDecision(request, { decisionId, path, input, result: result.value, metrics, snapshot });
    return sendJson(reply, 200, result.value, flag(query, 'pretty'));
  }

  // --- Policy API ---

  readonly policyList = (request: ApiRequest, reply: ApiReply) => {
    const snapshot = this.options.store.current;
    const result = [...snapshot.policies.values()].map((p) => ({ id: p.id, raw: p.raw, ast: snapshot.ast(p.id) }));
    return sendJson(reply, 200, { result }, flag(request.query as Query, 'pretty'));
  };

  readonly policyGet = (request: ApiRequest, reply: ApiReply) => {
    const id = rawRemainder(request, '/v1/policies/');
    const snapshot = this.options.store.current;
    const policy = snapshot.policies.get(id);
    if (!policy) throw new ApiError(404, Code.resourceNotFound, `storage_not_found_error: policy id ${JSON.stringify(id)}`);
    return sendJson(reply, 200, { result: { id, raw: policy.raw, ast: snapshot.ast(id) } }, flag(request.query as Query, 'pretty'));
  };

  readonly policyPut = async (request: ApiRequest, reply: ApiReply) => {
    const query = request.query as Query;
    const metrics = this.requestMetrics(query);
    const id = rawRemainder(request, '/v1/policies/');
    const raw = bodyBytes(request, this.options.config.maxGzipBytes).toString('utf8');
    if (raw.trim() === '') throw ApiError.badRequest('empty module');
    metrics.start('timer_rego_module_compile_ns');
    await this.options.store.putPolicy(id, raw);
    metrics.stop('timer_rego_module_compile_ns');
    return sendJson(reply, 200, flag(query, 'metrics') ? { metrics: metrics.all() } : {}, flag(query, 'pretty'));
  };

  readonly policyDelete = async (request: ApiRequest, reply: ApiReply) => {
    const query = request.query as Query;
    const metrics = this.requestMetrics(query);
    const id = rawRemainder(request, '/v1/policies/');
    metrics.start('timer_rego_module_compile_ns');
    await this.options.store.deletePolicy(id);
    metrics.stop('timer_rego_module_compile_ns');
    return sendJson(reply, 200, flag(query, 'metrics') ? { metrics: metrics.all() } : {}, flag(query, 'pretty'));
  };

  // --- Query API ---

  readonly queryGet = (request: ApiRequest, reply: ApiReply) => {
    const query = request.query as Query;
    const text = lastParam(query, 'q');
    if (text === undefined) throw ApiError.badRequest("missing parameter 'q'");
    return this.adhoc(request, reply, text, undefined);
  };

  readonly queryPost = (request: ApiRequest, reply: ApiReply) => {
    let body: unknown;
    try {
      body = this.body(request);
    } catch (error) {
      throw ApiError.badRequest(`error(s) occurred while decoding request: ${(error as Error).message.replace(/^[^:]*: /, '')}`);
    }
    const { query: text, input } = (body ?? {}) as { query?: unknown; input?: unknown };
    return this.adhoc(request, reply, typeof text === 'string' ? text : '', input ?? undefined);
  };

  private adhoc(request: ApiRequest, reply: ApiReply, text: string, input: unknown) {
    const query = request.query as Query;
    const metrics = this.requestMetrics(query);
    metrics.start('timer_server_handler_ns');
    const snapshot = this.options.store.current;
    const decisionId = this.options.decisionLog ? DecisionLogger.newId() : undefined;
    let prepared: PreparedQuery;
    try {
      metrics.start('timer_rego_query_compile_ns');
      prepared = snapshot.adhocQuery(text);
      metrics.stop('timer_rego_query_compile_ns');
    } catch (error) {
      if (error instanceof RegoErrors) {
        const parse = error.errors.some((e) => e.code === 'rego_parse_error');
        throw ApiError.rego(parse ? Message.parseQuery : Message.compileQuery, error);
      }
      throw error;
    }
    const explain = explainMode(query);
    let result: QueryResult;
    try {
      metrics.start('timer_rego_query_eval_ns');
      result = prepared.eval(this.evalOptions(snapshot, input, query, explain, metrics));
      metrics.stop('timer_rego_query_eval_ns');
    } catch (error) {
      this.logDecision(request, { decisionId, queryText: text, input, error, metrics, snapshot });
      throw error;
    }
    metrics.merge(result.metrics);
    metrics.stop('timer_server_handler_ns');
    const rows = result.results.map((row) => withoutWildcards(row.bindings));
    const response: Record<string, unknown> = {};
    if (explain !== 'off' && result.explanation) response.explanation = result.explanation;
    if (flag(query, 'metrics') || flag(query, 'instrument')) response.metrics = metrics.all();
    if (rows.length > 0) response.result = rows;
    this.logDecision(request, { decisionId, queryText: text, input, result: rows, metrics, snapshot });
    return sendJson(reply, 200, response, flag(query, 'pretty'));
  }

  // --- Health, Config, Status, Prometheus ---

  readonly health = (_request: ApiRequest, reply: ApiReply) => sendJson(reply, 200, {});

  readonly healthPolicy = (request: ApiRequest, reply: ApiReply) => {
    const path = ['system', 'health', ...pathAfter(request, '/health')];
    const snapshot = this.options.store.current;
    const ref = dataRef(path);
    let result: QueryResult;
    try {
      result = snapshot.refQuery(path).eval({ input: { plugin_state: {}, plugins_ready: true }, data: snapshot.data });
    } catch (error) {
      return sendJson(reply, 500, { error: (error as Error).message });
    }
    if (!result.defined) return sendJson(reply, 500, { error: `health check (${ref}) was undefined` });
    if (result.value !== true) return sendJson(reply, 500, { error: `health check (${ref}) returned unexpected value` });
    return sendJson(reply, 200, {});
  };

  readonly configGet = (request: ApiRequest, reply: ApiReply) => {
    const config = { ...reportedConfig(this.options.rawConfig), labels: this.labels() };
    return sendJson(reply, 200, { result: config }, flag(request.query as Query, 'pretty'));
  };

  readonly statusGet = (request: ApiRequest, reply: ApiReply) => {
    // OPA answers only when the status plugin is configured (`status` in the config).
    if (this.options.rawConfig.status === undefined) throw new ApiError(500, Code.internal, 'status plugin not enabled');
    const snapshot = this.options.store.current;
    const bundles = Object.fromEntries([...snapshot.bundles.values()].map((b) => [b.name, { name: b.name, active_revision: b.revision }]));
    const plugins = Object.fromEntries(['bundle', 'decision_logs', 'discovery', 'status'].map((name) => [name, { state: 'OK' }]));
    const result = { labels: this.labels(), bundles, plugins };
    return sendJson(reply, 200, { result }, flag(request.query as Query, 'pretty'));
  };

  readonly prometheus = async (_request: ApiRequest, reply: ApiReply) => {
    const text = await this.options.metrics.text();
    return reply.code(200).header('content-type', this.options.metrics.contentType).send(text);
  };

  // --- shared ---

  private evaluate(params: EvalParams, explain: ExplainMode): QueryResult {
    const { snapshot, path, input, query, metrics } = params;
    let prepared: PreparedQuery;
    try {
      prepared = snapshot.refQuery(path);
    } catch (error) {
      if (error instanceof RegoErrors) throw ApiError.rego(Message.compileQuery, error);
      throw error;
    }
    metrics.start('timer_rego_query_eval_ns');
    const result = prepared.eval(this.evalOptions(snapshot, input, query, explain, metrics));
    metrics.stop('timer_rego_query_eval_ns');
    metrics.merge(result.metrics);
    return result;
  }

  private evalOptions(snapshot: Snapshot, input: unknown, query: Query, explain: ExplainMode, metrics: RequestMetrics) {
    return {
      input,
      data: snapshot.data,
      strictBuiltinErrors: flag(query, 'strict-builtin-errors'),
      ...(explain !== 'off' ? { explain: explain === 'debug' ? ('full' as const) : explain } : {}),
      ...(metrics !== NO_METRICS ? { metrics: true } : {}),
    };
  }

  /** The parsed JSON (or YAML) body (already parsed when the authorizer read it); undefined when empty. */
  private body(request: ApiRequest): unknown {
    const cached = parsedBodies.get(request);
    if (cached) return cached.value;
    const bytes = bodyBytes(request, this.options.config.maxGzipBytes);
    return bytes.length === 0 ? undefined : parseDocument(bytes, isYaml(request), 'body contains malformed input document');
  }

  private requestMetrics(query: Query): RequestMetrics {
    return this.options.decisionLog || flag(query, 'metrics') || flag(query, 'instrument') ? new RequestMetrics() : NO_METRICS;
  }

  private labels(): Record<string, string> {
    return { ...this.options.config.labels, id: this.options.instanceId, version: this.options.version };
  }

  private provenance(snapshot: Snapshot) {
    const bundles = Object.fromEntries([...snapshot.bundles.values()].map((b) => [b.name, { revision: b.revision }]));
    return {
      version: this.options.version,
      build_commit: '',
      build_timestamp: '',
      build_hostname: '',
      ...(Object.keys(bundles).length > 0 ? { bundles } : {}),
    };
  }

  private logDecision(
    request: ApiRequest,
    event: { decisionId?: string; path?: readonly string[]; queryText?: string; input: unknown; result?: unknown; error?: unknown; metrics: RequestMetrics; snapshot: Snapshot },
  ): void {
    const log = this.options.decisionLog;
    if (!log || !event.decisionId) return;
    const error = event.error instanceof Error ? { code: (event.error as { code?: string }).code ?? Code.internal, message: event.error.message } : event.error;
    log.log({
      decisionId: event.decisionId,
      path: event.path,
      query: event.queryText,
      input: event.input,
      result: event.result,
      error,
      requestedBy: `${request.socket.remoteAddress ?? ''}:${request.socket.remotePort ?? ''}`,
      metrics: event.metrics.all(),
      bundles: Object.fromEntries([...event.snapshot.bundles.values()].map((b) => [b.name, { revision: b.revision }])),
    });
  }
}

/** A JSON Patch path (`/a/b`, `-`, `~1` escapes) as segments. */
function patchPath(path: string): string[] {
  const trimmed = path.replace(/^\/+|\/+$/g, '');
  if (trimmed === '') return [];
  return trimmed.split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** `data.a.b`, `data.a["x-y"]`, `data.a[0]` — how OPA prints a data reference. */
export function dataRef(path: readonly string[]): string {
  let out = 'data';
  for (const segment of path) {
    if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(segment)) out += `.${segment}`;
    else if (/^(0|[1-9]\d*)$/.test(segment)) out += `[${segment}]`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

function withoutWildcards(bindings: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(bindings)) if (!name.startsWith('$') && !name.startsWith('__local')) out[name] = value;
  return out;
}

