/**
 * The part of autocannon 8's API the HTTP bench uses (the package ships no types, and
 * @types/autocannon is not a dependency). See node_modules/autocannon/README.md.
 */
declare module 'autocannon' {
  export interface AutocannonRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    /** Returns the request to send (a falsy value restarts the request list). */
    setupRequest?: (request: AutocannonRequest, context: Record<string, unknown>) => AutocannonRequest;
    onResponse?: (status: number, body: string, context: Record<string, unknown>) => void;
  }

  export interface AutocannonOptions {
    url: string;
    connections?: number;
    /** Seconds (ignored when amount is set). */
    duration?: number;
    /** Total number of requests, divided among the connections. */
    amount?: number;
    pipelining?: number;
    /** Seconds before a request counts as timed out (default 10). */
    timeout?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    requests?: AutocannonRequest[];
    /** Milliseconds between samples; the result is emitted at the first sample after the end. */
    sampleInt?: number;
  }

  export interface Histogram {
    readonly min: number;
    readonly max: number;
    readonly average: number;
    readonly stddev: number;
    readonly total: number;
    readonly p50: number;
    readonly p90: number;
    readonly p97_5: number;
    readonly p99: number;
  }

  export interface AutocannonResult {
    readonly requests: Histogram;
    /** Milliseconds. */
    readonly latency: Histogram;
    readonly throughput: Histogram;
    /** Seconds. */
    readonly duration: number;
    /** Connection errors, timeouts included. */
    readonly errors: number;
    readonly timeouts: number;
    readonly non2xx: number;
    readonly resets: number;
    readonly '2xx': number;
    readonly statusCodeStats: Readonly<Record<string, { readonly count: number }>>;
  }

  export default function autocannon(
    options: AutocannonOptions,
    callback: (error: Error | null, result: AutocannonResult) => void,
  ): unknown;
}
