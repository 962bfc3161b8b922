/**
 * One load run with autocannon's programmatic API, checking every response: a response only counts as
 * served when the caller's `check` accepts its status and body. Latencies are recorded exactly (autocannon's
 * own histogram rounds to whole milliseconds, too coarse for a sub-millisecond proxy).
 */
import autocannon from 'autocannon';

/** The request every connection sends, over and over. */
export interface LoadRequest {
  /** HTTP method. */
  readonly method: 'POST' | 'GET';
  /** Path on the target. */
  readonly path: string;
  /** Headers. */
  readonly headers: Readonly<Record<string, string>>;
  /** Body (the same bytes for every request). */
  readonly body?: string;
  /**
   * Several requests instead of one: each connection sends them in turn, over and over (`path` and
   * `body` are then the first's).
   */
  readonly mix?: ReadonlyArray<{ readonly path: string; readonly body: string }>;
  /** Whether a response is a correct answer; else the text explains what is wrong with it. */
  check(status: number, body: string): true | string;
}

/** Options of {@link runLoad}. */
export interface LoadOptions {
  /** Base URL of the target, or several (their connections are spread over them in turn). */
  readonly url: string | readonly string[];
  /** What to send. */
  readonly request: LoadRequest;
  /** Concurrent connections. */
  readonly connections: number;
  /** Seconds. */
  readonly duration: number;
  /** Per-request timeout, seconds. */
  readonly timeout?: number;
  /** Requests per second offered by all connections together; as fast as they get answers when undefined. */
  readonly rate?: number;
}

/** What one run measured. */
export interface LoadResult {
  /** Measured seconds (wall clock). */
  readonly seconds: number;
  /** Responses received. */
  readonly responses: number;
  /** Correct answers (2xx and accepted by `check`). */
  readonly ok: number;
  /** Correct answers per second: the throughput that is reported. */
  readonly okPerSecond: number;
  /** Latency percentiles over every response, ms. */
  readonly latency: { readonly p50: number; readonly p90: number; readonly p99: number; readonly max: number; readonly mean: number };
  /** Responses with a status outside 2xx. */
  readonly non2xx: number;
  /** 2xx responses `check` refused. */
  readonly badBody: number;
  /** Connection errors (refused, reset) and timeouts. */
  readonly transportErrors: number;
  /** Timeouts (also counted in transportErrors). */
  readonly timeouts: number;
  /** Count by status code. */
  readonly statuses: Readonly<Record<string, number>>;
  /** Up to 3 distinct examples of what was wrong, for the report. */
  readonly samples: readonly string[];
}

/** Total of all failure kinds of a run. */
export function failures(result: Pick<LoadResult, 'non2xx' | 'badBody' | 'transportErrors'>): number {
  return result.non2xx + result.badBody + result.transportErrors;
}

class LatencyRecorder {
  #values = new Float64Array(1 << 16);
  #count = 0;

  add(ms: number): void {
    if (this.#count === this.#values.length) {
      const grown = new Float64Array(this.#values.length * 2);
      grown.set(this.#values);
      this.#values = grown;
    }
    this.#values[this.#count++] = ms;
  }

  summary(): LoadResult['latency'] {
    if (this.#count === 0) return { p50: NaN, p90: NaN, p99: NaN, max: NaN, mean: NaN };
    const sorted = this.#values.slice(0, this.#count).sort();
    const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
    let sum = 0;
    for (const v of sorted) sum += v;
    return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted[sorted.length - 1]!, mean: sum / sorted.length };
  }
}

/** Runs autocannon against `options.url` for `options.duration` seconds. */
export function runLoad(options: LoadOptions): Promise<LoadResult> {
  const latencies = new LatencyRecorder();
  let ok = 0;
  let non2xx = 0;
  let badBody = 0;
  const statuses: Record<string, number> = {};
  const samples = new Set<string>();
  const sample = (text: string): void => {
    if (samples.size < 3) samples.add(text.length > 200 ? `${text.slice(0, 200)}...` : text);
  };

  const request: autocannon.Request = {
    method: options.request.method,
    path: options.request.path,
    headers: { ...options.request.headers },
    ...(options.request.body === undefined ? {} : { body: options.request.body }),
    onResponse(status, body) {
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (status < 200 || status > 299) {
        non2xx++;
        sample(`HTTP ${status}: ${body}`);
        return;
      }
      const verdict = options.request.check(status, body);
      if (verdict === true) ok++;
      else {
        badBody++;
        sample(`HTTP ${status}, ${verdict}: ${body}`);
      }
    },
  };

  return new Promise((resolve, reject) => {
    const started = performance.now();
    const instance = autocannon(
      {
        url: typeof options.url === 'string' ? options.url : [...options.url],
        connections: options.connections,
        duration: options.duration,
        pipelining: 1,
        timeout: options.timeout ?? 10,
        ...(options.rate === undefined ? {} : { overallRate: options.rate }),
        requests: options.request.mix === undefined ? [request] : options.request.mix.map((r) => ({ ...request, path: r.path, body: r.body })),
      },
      (error, result) => {
        if (error !== null) return reject(error);
        // autocannon's duration is wall-clock from its start to its stop, in 10 ms steps.
        const seconds = result.duration > 0 ? result.duration : (performance.now() - started) / 1000;
        const responses = ok + non2xx + badBody;
        const transportErrors = result.errors;
        if (transportErrors > 0) sample(`${transportErrors} connection errors/timeouts (${result.timeouts} timeouts)`);
        resolve({
          seconds,
          responses,
          ok,
          okPerSecond: ok / seconds,
          latency: latencies.summary(),
          non2xx,
          badBody,
          transportErrors,
          timeouts: result.timeouts,
          statuses,
          samples: [...samples],
        });
      },
    );
    instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => latencies.add(responseTime));
  });
}
