/**
 * The payment processor, from the environment: `STRIPE_SECRET_KEY` (the API key), `STRIPE_WEBHOOK_SECRET`
 * (the endpoint's signing secret) and `STRIPE_API_BASE` (another API origin, e.g. stripe-mock at
 * `http://127.0.0.1:12111`). Without a key there is no client: the routes that need Stripe answer 503
 * `billing-not-configured` and everything else runs as before.
 *
 * Every call goes through `stripeCall`, which turns the processor's failures into 502
 * `payment-processor-error` without its message (which can echo request data) — the log gets the
 * processor's error type and request id only.
 */
import type Stripe from 'stripe';
import { GatewayError } from '../errors.js';
import type { Logger } from '../log.js';

export interface PaymentProcessor {
  client: Stripe;
  /** Null when STRIPE_WEBHOOK_SECRET is unset: the webhook then answers 503. */
  webhookSecret: string | null;
}

/**
 * The SDK (over 200 modules, several MiB of code and heap) is imported only when a key is set: a gateway
 * without billing never loads it.
 */
export async function stripeFromEnv(env: Record<string, string | undefined>): Promise<PaymentProcessor | null> {
  const key = env['STRIPE_SECRET_KEY'];
  if (!key) return null;
  const { default: Stripe } = await import('stripe');
  const base = env['STRIPE_API_BASE'];
  const where = base ? new URL(base) : null;
  const client = new Stripe(key, {
    // A gateway request waits on these calls; a stuck processor must not hold it for Stripe's default 80 s.
    timeout: 20_000,
    maxNetworkRetries: 2,
    ...(where
      ? {
          host: where.hostname,
          port: Number(where.port || (where.protocol === 'https:' ? 443 : 80)),
          protocol: where.protocol === 'https:' ? ('https' as const) : ('http' as const),
        }
      : {}),
  });
  return { client, webhookSecret: env['STRIPE_WEBHOOK_SECRET'] || null };
}

export function requireProcessor(p: PaymentProcessor | null): PaymentProcessor {
  if (!p) throw new GatewayError('billing-not-configured');
  return p;
}

/** Runs one processor call; a failure becomes 502 `payment-processor-error`, logged without its message. */
export async function stripeCall<T>(log: Logger, operation: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    const e = err as { type?: string; requestId?: string; statusCode?: number };
    log.warn('stripe.call_failed', { operation, type: e.type ?? 'unknown', requestId: e.requestId ?? null, status: e.statusCode ?? null });
    throw new GatewayError('payment-processor-error', undefined, { cause: err });
  }
}
