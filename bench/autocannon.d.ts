/**
 * autocannon ships no type declarations and @types/autocannon is not a dependency, so this
 * declares the small part of its programmatic API the benchmark uses (autocannon 9:
 * lib/init.js, lib/aggregateResult.js). Without it `tsc` (strict) refuses the import.
 */
declare module 'autocannon' {
  namespace autocannon {
    interface Options {
      url: string;
      connections?: number;
      duration?: number;
      /** Per-request timeout, seconds. */
      timeout?: number;
      pipelining?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      /** Replace every `[<id>]` in the request with a unique id, on each request. */
      idReplacement?: boolean;
      title?: string;
      /** Requests sent in turn instead of the options' one; `onResponse` sees each answer's status and body. */
      requests?: Request[];
    }

    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string>) => void;
    }

    /** One histogram as autocannon reports it (values in ms for latency, req/s for requests). */
    interface Histogram {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      total: number;
      p50: number;
      p90: number;
      p97_5: number;
      p99: number;
      p99_9: number;
    }

    interface Result {
      title?: string;
      url: string;
      connections: number;
      duration: number;
      errors: number;
      timeouts: number;
      non2xx: number;
      resets: number;
      '1xx': number;
      '2xx': number;
      '3xx': number;
      '4xx': number;
      '5xx': number;
      statusCodeStats: Record<string, { count: number }>;
      latency: Histogram;
      requests: Histogram & { sent: number };
      throughput: Histogram;
    }

    interface Instance extends PromiseLike<Result> {
      /** Every response; `responseTime` is in ms with sub-ms precision (from process.hrtime). */
      on(event: 'response', listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void): this;
      on(event: 'reqError', listener: (error: Error) => void): this;
      on(event: 'done', listener: (result: Result) => void): this;
      stop(): void;
    }
  }

  /**
   * Without a callback autocannon returns its run tracker: an event emitter that is also a
   * thenable resolving with the aggregated result.
   */
  function autocannon(options: autocannon.Options): autocannon.Instance;

  export = autocannon;
}
