/**
 * Decision logs (`decision_logs.console=true`): one JSON line per decision, with OPA's fields
 * (`decision_id`, `path` or `query`, `input`, `result` or `error`, `requested_by`, `timestamp`,
 * `metrics`, `labels`, `bundles`, `type`, `msg`, `level`, `time`).
 */
import { randomUUID } from 'node:crypto';
import { toJson } from './requests.js';

export interface DecisionEvent {
  readonly decisionId: string;
  /** `httpapi/authz` for the Data API, absent for the Query API. */
  readonly path?: readonly string[];
  readonly query?: string;
  readonly input?: unknown;
  readonly result?: unknown;
  readonly error?: unknown;
  readonly requestedBy: string;
  readonly metrics?: Record<string, number>;
  readonly bundles?: Readonly<Record<string, { revision: string }>>;
}

export class DecisionLogger {
  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly labels: Readonly<Record<string, string>>,
  ) {}

  static newId(): string {
    return randomUUID();
  }

  log(event: DecisionEvent): void {
    const now = new Date().toISOString();
    const entry: Record<string, unknown> = {
      bundles: event.bundles && Object.keys(event.bundles).length > 0 ? event.bundles : undefined,
      decision_id: event.decisionId,
      error: event.error,
      input: event.input,
      labels: this.labels,
      level: 'info',
      metrics: event.metrics,
      msg: 'Decision Log',
      path: event.path?.join('/'),
      query: event.query,
      requested_by: event.requestedBy,
      result: event.result,
      time: now,
      timestamp: now,
      type: 'openpolicyagent.org/decision_logs',
    };
    this.out.write(toJson(entry, false));
  }
}
