/**
 * Two kinds of metrics, as OPA has them: per-request timers reported in API responses with
 * `?metrics` (OPA's names, nanoseconds), and the server's Prometheus metrics at `GET /metrics`
 * (`http_request_duration_seconds` by code, handler and method, plus the process metrics).
 */
import { Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Nanosecond timers and counters of one request (`timer_rego_query_eval_ns`, …). */
export class RequestMetrics {
  private readonly started = new Map<string, bigint>();
  private readonly values: Record<string, number> = {};

  start(name: string): void {
    this.started.set(name, process.hrtime.bigint());
  }

  stop(name: string): void {
    const start = this.started.get(name);
    if (start === undefined) return;
    this.started.delete(name);
    this.values[name] = (this.values[name] ?? 0) + Number(process.hrtime.bigint() - start);
  }

  count(name: string, by = 1): void {
    this.values[name] = (this.values[name] ?? 0) + by;
  }

  /** Take the evaluator's own figures (its timer names are OPA's). */
  merge(figures: Readonly<Record<string, number>> | undefined): void {
    if (figures) for (const [name, value] of Object.entries(figures)) this.values[name] = value;
  }

  all(): Record<string, number> {
    return Object.fromEntries(Object.entries(this.values).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }
}

/** Records nothing, for requests that neither report nor log metrics. */
class NoMetrics extends RequestMetrics {
  override start(): void {}
  override stop(): void {}
  override count(): void {}
  override merge(): void {}
}

export const NO_METRICS: RequestMetrics = new NoMetrics();

export class ServerMetrics {
  readonly registry = new Registry();
  private readonly duration: Histogram<'code' | 'handler' | 'method'>;

  private runtimeMetrics = false;

  constructor() {
    this.duration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'A histogram of duration for requests.',
      labelNames: ['code', 'handler', 'method'],
      registers: [this.registry],
    });
  }

  private readonly series = new Map<string, { observe(value: number): void }>();

  observe(handler: string, method: string, code: number, seconds: number): void {
    const key = `${handler} ${method} ${code}`;
    let series = this.series.get(key);
    if (!series) {
      series = this.duration.labels({ code: String(code), handler, method: method.toLowerCase() });
      this.series.set(key, series);
    }
    series.observe(seconds);
  }

  /**
   * The exposition text. Node runtime metrics (process, heap, GC, event-loop lag) start with the
   * first scrape: their observers cost about a tenth of a decision's CPU, which a server nobody
   * scrapes should not pay. Process CPU and memory figures are absolute, so nothing is lost there;
   * GC and event-loop histograms count from that first scrape.
   */
  text(): Promise<string> {
    if (!this.runtimeMetrics) {
      this.runtimeMetrics = true;
      collectDefaultMetrics({ register: this.registry });
    }
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
