/**
 * The data key on the admin API (mounted by admin.ts, behind the operator token):
 *   POST /admin/data-key/rewrap   re-seals every stored secret (TOTP) under the keyring's first key
 *                                 -> {keyId, total, rewrapped, unopenable}
 * How a new key is rolled in: put it first in PORTCULLIS_DATA_KEY (keeping the old one after it), restart
 * every gateway, rewrap, then drop the old key. Records are also rewrapped one by one as they are read.
 */
import type { Router } from '@koa/router';
import type { Deps } from './deps.js';

export function mountDataKeyAdmin(router: Router, deps: Pick<Deps, 'totp'>): void {
  router.post('/data-key/rewrap', async (ctx) => {
    ctx.body = { keyId: deps.totp.keyId, ...(await deps.totp.rewrapAll()) };
  });
}
