/**
 * What a verification outcome does to a principal. The card webhook and the operator's rung grant call the
 * same grant (`grantRung`, src/auth/principals.ts), so a card verified through Stripe and a rung an operator
 * grants leave the same principal behind.
 *
 * Outcomes arrive as webhooks, in any order and possibly more than once, so each is written to be applied
 * in any order: a verified card or identity never lowers a higher rung the principal holds (the card is a
 * floor, not a downgrade), and a refusal is only a recorded check — it never takes a rung away. The
 * check records are replaced newest-first by the processor's event time.
 */
import { GatewayError, type ErrorCode } from '../errors.js';
import { grantRung, requirePrincipal } from '../auth/principals.js';
import type { Runtime } from '../config/compile.js';
import type { PrincipalRecord } from '../store/store.js';
import type { BillingDeps } from './deps.js';
import type { BillingStore, CheckRecord } from './store.js';

/** The rank of a rung in the ladder (1 = lowest), 0 for none. */
export function rungRank(runtime: Runtime, rungId: string | null | undefined): number {
  if (!rungId) return 0;
  return [...runtime.rungs.keys()].indexOf(rungId) + 1;
}

/** The principal's rung when it is still valid, else null. */
export function validRung(p: PrincipalRecord, now: number): string | null {
  return p.rung !== null && Date.parse(p.rung.expiresAt) > now ? p.rung.id : null;
}

async function grantUnlessHigher(d: BillingDeps, principalId: string, rungId: string, source: string): Promise<string> {
  const runtime = d.holder.current;
  const p = await requirePrincipal(d.store, principalId);
  const held = validRung(p, Date.now());
  if (rungRank(runtime, held) > rungRank(runtime, rungId)) return `kept higher rung ${held}`;
  await grantRung(d.store, runtime, principalId, rungId, source);
  return `granted ${rungId}`;
}

const days = (n: number, from = Date.now()) => new Date(from + n * 86_400_000).toISOString();

/**
 * A card was registered. A prepaid card (`card.funding === 'prepaid'`) is refused: recorded, no rung. A
 * credit or debit card verifies: rung `card` (L1) with its scope. Anything else (funding `unknown`, or not
 * a card) is refused as `card-funding-unknown`: the spec asks for a live credit or debit card.
 */
export async function cardRegistered(
  d: BillingDeps,
  principalId: string,
  card: { funding: string | null; paymentMethod: string; at: number },
): Promise<string> {
  const runtime = d.holder.current;
  if (card.funding === 'prepaid') {
    await d.billing.putCheck(principalId, 'card', {
      state: 'refused',
      reason: 'prepaid-card-not-accepted',
      evidenceRef: card.paymentMethod,
      at: card.at,
      expiresAt: null,
    });
    return 'card refused: prepaid';
  }
  if (card.funding !== 'credit' && card.funding !== 'debit') {
    // Not a card, or a card whose funding the network does not report: nothing a zero-amount check proves.
    await d.billing.putCheck(principalId, 'card', {
      state: 'refused',
      reason: 'card-funding-unknown',
      evidenceRef: card.paymentMethod,
      at: card.at,
      expiresAt: null,
    });
    return `card refused: funding ${card.funding ?? 'none'}`;
  }
  const validity = runtime.rungs.get('card')?.validityDays ?? 365;
  await d.billing.putCheck(principalId, 'card', { state: 'verified', reason: null, evidenceRef: card.paymentMethod, at: card.at, expiresAt: days(validity) });
  return `card verified: ${await grantUnlessHigher(d, principalId, 'card', 'card-webhook')}`;
}

/** A Stripe Identity session reached a final state. Verified grants rung `identity` (L2); the evidence stays with Stripe. */
export async function identityChecked(
  d: BillingDeps,
  principalId: string,
  outcome: { state: 'verified' | 'refused' | 'pending'; reason: string | null; session: string; at: number },
): Promise<string> {
  const validity = d.holder.current.rungs.get('identity')?.validityDays ?? 365;
  const check: CheckRecord = {
    state: outcome.state,
    reason: outcome.reason,
    evidenceRef: outcome.session,
    at: outcome.at,
    expiresAt: outcome.state === 'verified' ? days(validity) : null,
  };
  await d.billing.putCheck(principalId, 'identity', check);
  if (outcome.state !== 'verified') return `identity ${outcome.state}${outcome.reason ? `: ${outcome.reason}` : ''}`;
  return `identity verified: ${await grantUnlessHigher(d, principalId, 'identity', 'identity-webhook')}`;
}

/** The operator's review of a business or contracted application includes the AML/CTF screening. */
export async function screeningCleared(d: BillingDeps, principalId: string, reference: string): Promise<void> {
  const v = d.holder.current.verification;
  await d.billing.putCheck(principalId, 'screening', {
    state: 'verified',
    reason: null,
    evidenceRef: reference,
    at: Date.now(),
    expiresAt: days(v.screeningValidityDays),
  });
}

/** What an operator's screening reference may be: the screening provider's case or report id, not evidence. */
const SCREENING_REFERENCE = /^[\x21-\x7e][\x20-\x7e]{0,199}$/;

/**
 * An operator's rung grant (admin API and CLI). A screened rung (business, contracted: L3/L4) needs a clean
 * AML/CTF screening however it is granted, so the grant must name the screening's evidence reference: it is
 * recorded (valid `screeningValidityDays`) before the rung, so the principal never holds the rung without
 * it. Without a reference the grant is refused, changing nothing.
 */
export async function operatorGrant(
  d: Pick<BillingDeps, 'store' | 'billing' | 'holder'>,
  principalId: string,
  rungId: string,
  screeningReference: unknown,
): Promise<PrincipalRecord> {
  const runtime = d.holder.current;
  if (!runtime.rungs.has(rungId)) return grantRung(d.store, runtime, principalId, rungId, 'operator');
  const screened = runtime.verification.screenedRungs.includes(rungId);
  if (screeningReference !== undefined && (typeof screeningReference !== 'string' || !SCREENING_REFERENCE.test(screeningReference))) {
    throw new GatewayError('invalid-request', "screeningReference must be 1-200 printable ASCII characters (the screening's case or report id)");
  }
  if (screened && screeningReference === undefined) {
    throw new GatewayError(
      'screening-required',
      `rung ${rungId} needs a clean AML/CTF screening: send screeningReference (CLI: --screening <reference>) naming its evidence`,
    );
  }
  await requirePrincipal(d.store, principalId);
  if (screened) {
    await d.billing.putCheck(principalId, 'screening', {
      state: 'verified',
      reason: null,
      evidenceRef: `operator:${screeningReference as string}`,
      at: Date.now(),
      expiresAt: days(runtime.verification.screeningValidityDays),
    });
  }
  return grantRung(d.store, runtime, principalId, rungId, 'operator');
}

/**
 * Why a principal's team requirements fail beyond what the policy knows: a refused prepaid card (when the
 * policy says verification is required), or a screened rung without a clean AML/CTF screening (none
 * recorded: `screening-required`; past its expiry: `screening-expired`). Admission asks
 * this only on those paths, so an ordinary call pays no extra store round trip.
 */
export async function verificationRefusal(
  billing: BillingStore,
  runtime: Runtime,
  p: PrincipalRecord,
  policyCode: string | null,
  now = Date.now(),
): Promise<ErrorCode | null> {
  const rung = validRung(p, now);
  if (policyCode === 'verification-required' && rung === null && p.rung === null) {
    const card = (await billing.checks(p.id)).card;
    if (card?.state === 'refused' && card.reason === 'prepaid-card-not-accepted') return 'prepaid-card-not-accepted';
    return null;
  }
  if (policyCode === null && rung !== null && runtime.verification.screenedRungs.includes(rung)) {
    const screening = (await billing.checks(p.id)).screening;
    if (!screening || screening.state !== 'verified') return 'screening-required';
    if (screening.expiresAt && Date.parse(screening.expiresAt) <= now) return 'screening-expired';
  }
  return null;
}
