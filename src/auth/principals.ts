/**
 * Principals and what changes them: creation, rung grants (with the scopes a rung approves and the AUP
 * consent that comes with verification), scope approvals, and token issue/revoke. The admin API calls these
 * today; the payment-processor webhooks will call the same functions, so both paths grant the same way.
 */
import { randomUUID } from 'node:crypto';
import { GatewayError } from '../errors.js';
import type { Runtime } from '../config/compile.js';
import { StoreConflict, type PrincipalRecord, type Store, type TokenRecord } from '../store/store.js';
import { generateToken, hashToken, newTokenId, type TokenFormat } from './pat.js';

const TENANT = /^[a-z0-9][a-z0-9-]{0,62}$/;

export function principalId(domain: string, tenant: string): string {
  return `did:web:${domain}:tenant:${tenant}`;
}

export async function createPrincipal(store: Store, runtime: Runtime, opts: { tenant?: string; username?: string } = {}): Promise<PrincipalRecord> {
  const tenant = opts.tenant ?? randomUUID().replace(/-/g, '').slice(0, 16);
  if (!TENANT.test(tenant)) throw new GatewayError('invalid-request', 'tenant must be 1-63 lowercase letters, digits or dashes');
  const record: PrincipalRecord = {
    id: principalId(runtime.gateway.principalDomain, tenant),
    username: opts.username ?? tenant,
    createdAt: new Date().toISOString(),
    rung: null,
    aup: null,
    scopes: [],
  };
  try {
    await store.createPrincipal(record);
  } catch (err) {
    if (err instanceof StoreConflict) throw new GatewayError('principal-exists');
    throw err;
  }
  return record;
}

export async function requirePrincipal(store: Store, id: string): Promise<PrincipalRecord> {
  const p = await store.getPrincipal(id);
  if (!p) throw new GatewayError('principal-not-found');
  return p;
}

/**
 * Grants a rung. Verification is where the AUP is accepted (at checkout for the card), so the grant records
 * consent to the current AUP version, and approves the scopes the rung approves (card: `owned` with
 * `code-review`), keeping any tasks the principal's scope already had.
 */
export async function grantRung(store: Store, runtime: Runtime, id: string, rungId: string, source: string, now = new Date()): Promise<PrincipalRecord> {
  const rung = runtime.rungs.get(rungId);
  if (!rung) throw new GatewayError('unknown-rung', `no rung "${rungId}"; the ladder has ${[...runtime.rungs.keys()].join(', ')}`);
  const principal = await requirePrincipal(store, id);
  const expiresAt = new Date(now.getTime() + rung.validityDays * 86_400_000).toISOString();
  await store.setRung(id, { id: rung.id, grantedAt: now.toISOString(), expiresAt, source }, { version: runtime.aupVersion, at: now.toISOString() });
  let updated: PrincipalRecord | null = principal;
  for (const approval of rung.approves) {
    const existing = principal.scopes.find((s) => s.id === approval.scope && s.status === 'approved');
    const tasks = [...new Set([...(existing?.tasks ?? []), ...approval.tasks])];
    updated = await store.putScope(id, { id: approval.scope, status: 'approved', tasks, approvedAt: existing?.approvedAt ?? now.toISOString() });
  }
  return (await store.getPrincipal(id)) ?? updated ?? principal;
}

export async function approveScope(store: Store, runtime: Runtime, id: string, scope: string, tasks: string[], now = new Date()): Promise<PrincipalRecord> {
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(scope)) throw new GatewayError('invalid-request', 'scope id must be lowercase letters, digits or dashes');
  const unknown = tasks.filter((t) => !runtime.tasks[t]);
  if (tasks.length === 0 || unknown.length > 0) {
    throw new GatewayError('invalid-request', `tasks must be a non-empty list of ${Object.keys(runtime.tasks).join(', ')}`);
  }
  const principal = await requirePrincipal(store, id);
  const existing = principal.scopes.find((s) => s.id === scope);
  const updated = await store.putScope(id, {
    id: scope,
    status: 'approved',
    tasks: [...new Set(tasks)],
    approvedAt: existing?.approvedAt ?? now.toISOString(),
  });
  if (!updated) throw new GatewayError('principal-not-found');
  return updated;
}

/** Issues a token; the returned `token` string is the only copy that will ever exist. */
export async function issueToken(
  store: Store,
  principalId: string,
  label: string,
  format: TokenFormat = 'v2',
): Promise<{ id: string; label: string; token: string }> {
  await requirePrincipal(store, principalId);
  if (!label || label.length > 100) throw new GatewayError('invalid-request', 'label must be 1-100 characters');
  const token = generateToken(format);
  const record: TokenRecord = {
    id: newTokenId(),
    principalId,
    label,
    format,
    hash: hashToken(token),
    createdAt: new Date().toISOString(),
    revokedAt: null,
  };
  await store.putToken(record);
  return { id: record.id, label, token };
}

export async function revokeToken(store: Store, tokenId: string): Promise<TokenRecord> {
  const record = await store.revokeToken(tokenId, new Date().toISOString());
  if (!record) throw new GatewayError('token-not-found');
  return record;
}
