/**
 * Storage credits: bought as a top-up (catalog/billing.yaml, `scope: storage`), each grant valid for its
 * top-up's `validityMonths` (12). Nothing meters storage yet, so nothing is spent from them; the billing
 * status shows the unexpired credits as a `storage` balance beside `ai` once a principal holds any.
 */
import type { BillingStore } from './store.js';

export interface StorageBalance {
  scope: 'storage';
  grantedMicroUSD: number;
  spentMicroUSD: number;
  reservedMicroUSD: number;
  availableMicroUSD: number;
  /** When the soonest unexpired grant lapses. */
  nextExpiryAt: string | null;
}

export async function storageBalance(billing: BillingStore, principalId: string, now = Date.now()): Promise<StorageBalance | null> {
  const grants = await billing.storageGrants(principalId);
  if (grants.length === 0) return null;
  const live = grants.filter((g) => Date.parse(g.expiresAt) > now);
  const granted = live.reduce((sum, g) => sum + g.microUSD, 0);
  const next = live.map((g) => g.expiresAt).sort()[0] ?? null;
  return { scope: 'storage', grantedMicroUSD: granted, spentMicroUSD: 0, reservedMicroUSD: 0, availableMicroUSD: granted, nextExpiryAt: next };
}
