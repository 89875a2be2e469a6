/** The research and billing resources as the console reads them, and the next step for each refusal reason. */
export interface ResearchStatus {
  status: 'eligible' | 'pending';
  reason: string | null;
  freeTier?: { limit?: number; used?: number; remaining?: number; unit?: string; resetsAt?: string };
  trust?: {
    rung?: string | null;
    level?: string | null;
    evidence?: string | null;
    verifiedAt?: string | null;
    expiresAt?: string | null;
    tokensPerDay?: number;
    tokensUsedToday?: number;
    screening?: { status?: string; expiresAt?: string | null };
    projectedAt?: string;
    validUntil?: string;
  };
  scopes: Array<{ id: string; status: string; tasks: string[] }>;
}

export interface BillingStatus {
  status: string;
  plan: string | null;
  balances: Array<{ scope: string; grantedMicroUSD: number; spentMicroUSD: number; reservedMicroUSD: number; availableMicroUSD: number }>;
}

const STEPS: Record<string, { label: string; href: string }> = {
  'verification-required': { label: 'Verify a card', href: '#verification' },
  'verification-expired': { label: 'Verify your card again', href: '#verification' },
  'prepaid-card-not-accepted': { label: 'Register a credit or debit card', href: '#verification' },
  'screening-expired': { label: 'Renew screening', href: '#verification' },
  'aup-consent-required': { label: 'Apply for a research scope', href: '#verification' },
  'research-scope-required': { label: 'Apply for a research scope', href: '#verification' },
};

export function nextStep(reason: string | null): { label: string; href: string } | null {
  return reason ? (STEPS[reason] ?? { label: 'See what is missing', href: '#verification' }) : null;
}
