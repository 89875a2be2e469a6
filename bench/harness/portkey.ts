/**
 * Row R4 of the bench: Portkey's open-source gateway (`@portkey-ai/gateway`, a devDependency), started
 * headless in this process: `node --import tsx bench/harness/portkey.ts --port=<p> --headless`. Callers
 * send `x-portkey-provider: openai` and `x-portkey-custom-host: http://127.0.0.1:<mock>/v1`.
 *
 * One workaround, so that streaming works at all: Portkey appends its `x-portkey-*` headers to the
 * upstream's fetch Response, whose headers are immutable; with the @hono/node-server it now installs
 * (>= 1.19, required by its own @hono/node-ws) every streamed call fails with `TypeError: immutable`
 * (Portkey-AI/gateway#1389, #1550). As Portkey's proposed fix (Portkey-AI/gateway#1551) does, upstream responses are
 * re-wrapped here in a Response with a mutable copy of their headers: one small object per call.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const NativeResponse = globalThis.Response;
const nativeFetch = globalThis.fetch;
globalThis.fetch = async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
  const res = await nativeFetch(input, init);
  return new NativeResponse(res.body, { status: res.status, statusText: res.statusText, headers: new Headers(res.headers) });
};

const entry = createRequire(import.meta.url).resolve('@portkey-ai/gateway/build/start-server.js');
await import(pathToFileURL(entry).href);
