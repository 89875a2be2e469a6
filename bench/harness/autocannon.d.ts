/**
 * The part of autocannon's programmatic API the bench uses (autocannon ships no types). `Client` is its
 * per-connection client as `setupClient` receives it; `_doRequest` is internal and wrapped by the pacer
 * in load.ts (see there why).
 */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  export interface RequestParams {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    [key: string]: unknown;
  }

  export interface Client extends EventEmitter {
    destroyed: boolean;
    _doRequest(...args: unknown[]): void;
  }

  export interface Options {
    url: string;
    method?: string;
    connections?: number;
    duration?: number;
    amount?: number;
    pipelining?: number;
    timeout?: number;
    sampleInt?: number;
    headers?: Record<string, string>;
    body?: string | Buffer;
    requests?: Array<RequestParams & { setupRequest?: (req: RequestParams, context: Record<string, unknown>) => RequestParams }>;
    setupClient?: (client: Client) => void;
    excludeErrorStats?: boolean;
  }

  export interface Result {
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    [key: string]: unknown;
  }

  export interface Instance extends EventEmitter {
    stop(): void;
  }

  function autocannon(opts: Options, cb: (err: Error | null, result: Result) => void): Instance;
  export default autocannon;
}
