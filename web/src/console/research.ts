/** The research and billing resources as the console reads them, and the next step for each refusal reason. */
export interface ResearchStatus {
  status: 'eligible' | 'pending';
  reason: string | null;
  freeTier: { unit: 'requests' | 'tokens'; perDay: number; used: number; remaining: number; resetsAt: string };
  trust: {
    rung: string | null;
    level: string | null;
    evidence: { kind: string; reference: string | null; source: string } | null;
    verifiedAt: string | null;
    expiresAt: string | null;
    screening: { status: string; checkedAt: string | null; expiresAt: string | null };
    projectedAt: string;
    validUntil: string;
  };
  scopes: Array<{ id: string; status: string; tasks: string[] }>;
}

export interface BillingStatus {
  status: string;
  plan: string | null;
  balances: Array<{ scope: string; grantedMicroUSD: number; spentMicroUSD: number; reservedMicroUSD: number; availableMicroUSD: number }>;
}

/** The meter's counters for the current UTC day (GET /v1/usage's `today`). */
export interface Today {
  day: string;
  freeUsed: number;
  freeHeld: number;
  rungTokensUsed: number;
  rungTokensHeld: number;
}

const VERIFY = { label: 'Verify a card', href: '#verification' };
const APPLY = { label: 'Apply for a research scope', href: '#verification' };
const STEPS: Record<string, { label: string; href: string }> = {
  'verification-required': VERIFY,
  'verification-expired': { label: 'Verify your card again', href: '#verification' },
  'prepaid-card-not-accepted': { label: 'Register a credit or debit card', href: '#verification' },
  'screening-expired': { label: 'Renew screening', href: '#verification' },
  'aup-consent-required': APPLY,
  'research-scope-required': APPLY,
  'daily-allowance-exhausted': { label: 'Buy credits', href: '#billing' },
  'insufficient-credits': { label: 'Top up credits', href: '#billing' },
};

/** What a refusal reason means, in words, for the status line (the code stays beside it, small, for support). */
const REASONS: Record<string, string> = {
  'verification-required': 'Red-team models open once you verify a card. It is registered, never charged.',
  'verification-expired': 'Your card verification has expired: verify it again to keep red-team models open.',
  'prepaid-card-not-accepted': 'Prepaid cards are not accepted: register a credit or debit card.',
  'screening-expired': 'Your screening has expired: renew it to keep red-team models open.',
  'aup-consent-required': 'Accept the acceptable-use policy in an application for a research scope.',
  'research-scope-required': 'Apply for a research scope (what you test, and which tasks) to open red-team models.',
  'daily-allowance-exhausted': "Today's allowance is used up: buy credits, or wait until it resets.",
  'insufficient-credits': 'Your credits are used up: top up to go on.',
};

export function reasonText(reason: string | null): string {
  if (!reason) return 'Something is missing before red-team models open.';
  return REASONS[reason] ?? 'Something is missing before red-team models open: see Verification.';
}

export function nextStep(reason: string | null): { label: string; href: string } | null {
  return reason ? (STEPS[reason] ?? { label: 'See what is missing', href: '#verification' }) : null;
}
