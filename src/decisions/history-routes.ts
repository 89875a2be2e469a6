/**
 * The version history with content, on the API listener, public as GET /v1/secure is (what a gateway
 * decides with is for anyone to review):
 *   GET /v1/secure/history                       every version of every document, with when it went live
 *                                                (the `history` of GET /v1/secure)
 *   GET /v1/secure/history/{document}/{ref}      one version with its content: `ref` is its hex SHA-256 or
 *                                                its version string (the newest content of that version)
 * `document` is `policy` (the wasm, base64, with the Rego it was built from in `sources`), `policy-data`
 * (the `data` document the policy was given, canonical JSON), `catalog`, `rungs`, `guardrails`, `firewall`
 * or `compliance` (each file as read). The content hashes to `sha256`, so a reader checks what it got.
 * An answer by hash never changes: it is served `immutable`, to be cached for good. An answer by version
 * string is the newest content under that string, and an edit that keeps the `version:` line puts a new
 * content under it: it is served `no-cache`, with `content-location` naming the by-hash answer.
 */
import type { Context } from 'koa';
import type { HistoryRecorder } from '../secure/recorder.js';
import type { RuntimeHolder } from '../config/reloader.js';
import { GatewayError } from '../errors.js';
import type { DecisionStore } from './store.js';

const SHA256 = /^[0-9a-f]{64}$/;

export function historyList(holder: RuntimeHolder, history: HistoryRecorder) {
  return async function historyList(ctx: Context): Promise<void> {
    ctx.set('cache-control', 'no-cache');
    ctx.body = { object: 'list', data: await history.history(holder.current) };
  };
}

export function historyVersion(holder: RuntimeHolder, history: HistoryRecorder, store: Pick<DecisionStore, 'getVersion'>) {
  return async function historyVersion(ctx: Context): Promise<void> {
    const { document, ref } = ctx.params as { document: string; ref: string };
    let sha = SHA256.test(ref) ? ref : null;
    if (!sha) {
      // By version: the newest content that went live under that version string (policy versions are the
      // wasm hash's first 12 digits, and name one content).
      const entries = (await history.history(holder.current)).filter((h) => h.document === document && h.version === ref);
      sha = entries.at(-1)?.sha256 ?? null;
    }
    const version = sha ? await store.getVersion(document, sha) : null;
    if (!version) throw new GatewayError('version-not-found', `no version ${ref} of ${document} in the version history`);
    if (sha === ref) ctx.set('cache-control', 'public, max-age=31536000, immutable');
    else {
      ctx.set('cache-control', 'no-cache');
      ctx.set('content-location', `/v1/secure/history/${encodeURIComponent(document)}/${sha}`);
    }
    ctx.body = { object: 'version', ...version };
  };
}
