/**
 * The receipt log on the API host (receipts/proofs.ts builds the answers):
 *   GET /v1/receipts/{id}              the caller's own receipt (PAT or session), with `logIndex`, `inclusionProof` and
 *                                      the signed `checkpoint` — or `logIndex` and `pending: true` until a
 *                                      checkpoint covers it; another principal's id is answered as not found
 *   GET /v1/receipts/log/checkpoint    public: the latest signed checkpoint (text/plain, a C2SP signed note)
 *   GET /v1/receipts/log/consistency?from=N&to=M
 *                                      public: `{from, to, proof: [base64...]}`, the RFC 9162 consistency
 *                                      proof between two tree sizes of the log
 *   GET /v1/receipts/log/tile/<L>/<N>[.p/<W>]
 *                                      public: a C2SP tlog-tiles hash tile (receipts/tiles.ts), immutable
 * The log routes hold nothing secret: leaf hashes are of receipts a reader cannot get without the receipt.
 */
import type { Context } from 'koa';
import { GatewayError } from '../errors.js';
import { PAT_OR_SESSION, resolveCaller, type CallerDeps } from '../auth/caller.js';
import type { Receipts } from '../receipts/service.js';
import { consistency, parseRange, withProof } from '../receipts/proofs.js';
import { parseTilePath, tileNodes } from '../receipts/tiles.js';

export function ownReceipt(deps: CallerDeps & { receipts: Receipts }) {
  return async function ownReceipt(ctx: Context): Promise<void> {
    const identity = await resolveCaller(ctx, deps, PAT_OR_SESSION);
    const receipt = await deps.store.getReceipt(String((ctx.params as Record<string, string>)['id']));
    if (!receipt || receipt.principalId !== identity.principal.id) throw new GatewayError('receipt-not-found');
    ctx.body = await withProof(deps.receipts.log, receipt);
  };
}

export function logCheckpoint(receipts: Receipts) {
  return async function logCheckpoint(ctx: Context): Promise<void> {
    const cp = await receipts.log.checkpoint();
    if (!cp) throw new GatewayError('log-not-ready');
    ctx.set('cache-control', 'no-cache');
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = cp.note;
  };
}

export function logConsistency(receipts: Receipts) {
  return async function logConsistency(ctx: Context): Promise<void> {
    const { from, to } = parseRange(ctx.query, await receipts.log.checkpoint());
    ctx.body = { from, to, proof: await consistency(receipts.log, from, to) };
  };
}

export function logTile(receipts: Receipts) {
  return async function logTile(ctx: Context): Promise<void> {
    const ref = parseTilePath((ctx.params as Record<string, string | undefined>)['rest'] ?? '');
    if (!ref) throw new GatewayError('not-found', 'no such tile: the path is not <L>/<N>[.p/<W>] (C2SP tlog-tiles)');
    const ids = tileNodes(ref, (await receipts.log.checkpoint())?.size ?? 0);
    if (!ids) throw new GatewayError('not-found', 'no such tile under the latest checkpoint');
    // A served tile never changes: the hashes under a checkpoint are fixed.
    ctx.set('cache-control', 'public, max-age=31536000, immutable');
    ctx.type = 'application/octet-stream';
    ctx.body = Buffer.concat(await receipts.log.nodes(ids));
  };
}
