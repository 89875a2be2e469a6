/**
 * The one table of errors. Every code the gateway can answer lives here with its HTTP status and a default
 * message; every error leaves through `toWire` as `{error:{code,message}}`. The error table in docs/errors.md is
 * kept in step with this one by `test/errors.unit.test.ts`, so adding a code here means documenting it there.
 *
 * Messages never carry secrets or prompt text: they may name a model, task, band, rung, scope or limit.
 */

export const ERRORS = {
  // Request shape (validate)
  'invalid-json': { status: 400, message: 'the body is not valid JSON' },
  'invalid-request': { status: 400, message: 'the request does not match the expected shape' },
  'invalid-messages': { status: 400, message: 'messages break the conversation rules' },
  'unknown-tool-call-id': { status: 400, message: "a tool result's tool_call_id names no call of an earlier assistant turn" },
  'unknown-tool-choice': { status: 400, message: 'tool_choice names a function that is not in tools' },
  'too-many-turns': { status: 400, message: 'the conversation has more turns than the model allows' },
  'too-many-tools': { status: 400, message: 'the request defines more tools than the model allows' },
  'input-too-large': { status: 400, message: 'the input is longer than the model allows' },
  'max-tokens-out-of-range': { status: 400, message: 'max_tokens is outside what the model allows' },
  'unsupported-media-type': { status: 415, message: 'content-type must be application/json' },
  'payload-too-large': { status: 413, message: 'the body is larger than the POST limit' },
  'not-found': { status: 404, message: 'no such route' },
  'method-not-allowed': { status: 405, message: 'method not allowed on this route' },
  'wire-not-offered': { status: 405, message: 'this wire is not offered; use POST /v1/chat/completions' },

  // Step 1: principal (identify)
  unauthenticated: { status: 401, message: 'a bearer personal access token is required' },
  'invalid-token': { status: 401, message: 'the token is not a valid personal access token' },
  'token-revoked': { status: 401, message: 'the token has been revoked; issue a new one in the console' },

  // Step 2: model and route (admit)
  'model-not-found': { status: 404, message: 'the model is not in the catalog' },
  'route-not-configured': { status: 503, message: 'the model is listed but its route is not configured' },

  // Step 3: team requirements (admit)
  'verification-required': { status: 403, message: 'this model needs a verified principal' },
  'aup-consent-required': { status: 403, message: 'this model needs consent to the acceptable-use policy' },
  'research-scope-required': { status: 403, message: 'this model needs an approved research scope' },
  'task-not-offered': { status: 403, message: 'the task is not offered on this model' },
  'business-rung-required': { status: 403, message: 'the task band opens at the business rung (L3)' },
  'contracted-rung-required': { status: 403, message: 'the task band opens at the contracted rung (L4)' },
  'scope-not-approved': { status: 403, message: 'the named scope is not approved for this principal' },
  'task-out-of-scope': { status: 403, message: 'no approved scope lists this task' },
  'policy-rule-invalid': { status: 403, message: 'a deny rule of the admission policy has incomplete metadata; the call is refused' },

  // Step 4: quota (meter)
  'daily-ceiling-reached': { status: 429, message: 'the daily token ceiling of the rung would be passed; it resets at 00:00 UTC' },
  'daily-allowance-exhausted': { status: 429, message: 'the daily allowance is used and the principal holds no credits; it resets at 00:00 UTC' },
  'insufficient-credits': { status: 402, message: 'the available credits do not cover the worst case of this call' },

  // Billing and receipts
  'receipt-not-found': { status: 404, message: 'no such receipt for this principal' },

  // Step 5: guardrails (guard)
  'guardrail-blocked': { status: 403, message: 'the request was refused by a guardrail block rule' },
  'guardrail-classifier-unavailable': {
    status: 503,
    message: 'a guardrail classifier that fails closed could not be asked; the call was refused, nothing spent — retry later',
  },

  // Forward
  'upstream-model-mismatch': { status: 502, message: 'the upstream answered with a model other than the one routed' },
  'upstream-error': { status: 502, message: 'the upstream failed to answer' },
  'upstream-unavailable': { status: 502, message: 'the upstream could not be reached' },
  'upstream-timeout': { status: 504, message: 'the upstream did not answer in time' },

  // Jobs
  'inference-timeout': { status: 504, message: 'the answer was not ready within the synchronous wait; the job continues' },
  'job-not-found': { status: 404, message: 'no such job' },
  'invalid-job-id': { status: 400, message: 'jobId must be a UUID' },
  'idempotency-key-required': { status: 400, message: 'the idempotency-key header (a UUID v4) is required' },
  'invalid-idempotency-key': { status: 400, message: 'the idempotency-key header must be a UUID v4' },
  'idempotency-key-reused': { status: 409, message: 'this idempotency key was used with a different body' },
  'job-interrupted': { status: 503, message: 'the gateway instance running the job stopped; resend to run it again' },
  'job-expired': { status: 504, message: 'the job ran longer than the maximum run time and was stopped' },

  // Operator plane
  'admin-unauthorized': { status: 401, message: 'the operator token is missing or wrong' },
  'admin-forbidden': { status: 403, message: "the operator token's scope does not allow this" },
  'principal-not-found': { status: 404, message: 'no such principal' },
  'principal-exists': { status: 409, message: 'a principal with this id exists' },
  'token-not-found': { status: 404, message: 'no such token' },
  'unknown-rung': { status: 400, message: 'no such rung in the rung ladder' },
  'unknown-plan': { status: 400, message: 'no such plan in the billing catalog' },
  'operation-id-reused': { status: 409, message: 'this operation id was used for a different grant' },
  'config-invalid': { status: 422, message: 'the configuration did not validate; the running one is kept' },
  'decision-not-found': { status: 404, message: 'no such decision record (never made, or past its retention)' },
  'version-not-found': { status: 404, message: 'no such version of this document in the version history' },
  'impact-report-required': {
    status: 409,
    message: 'this reload changes the policy or rules: GET /admin/policy/impact for it first (policy.requireImpactReport)',
  },

  // Sign-in, sessions and account tokens (auth and console hosts)
  // ... wallet sign-ins: SIWE, CACAO and the passkey-owned smart account (src/wallet)
  'wallet-message-invalid': { status: 400, message: 'the message is not a well-formed EIP-4361 sign-in message' },
  'wallet-domain-mismatch': { status: 401, message: 'the message was written for another site: its domain is not this sign-in host' },
  'wallet-uri-mismatch': { status: 401, message: 'the message was written for another site: its URI is not on this sign-in host' },
  'wallet-chain-not-allowed': { status: 401, message: 'the message names a chain id this sign-in does not accept' },
  'wallet-message-expired': { status: 401, message: 'the message is past its expiration time; sign a new one' },
  'wallet-message-not-yet-valid': { status: 401, message: 'the message is not valid before its not-before time' },
  'wallet-signature-invalid': { status: 401, message: 'the signature does not prove the account named in the message' },
  'cacao-invalid': { status: 400, message: 'cacao must be a base64url dag-cbor CACAO (CAIP-74) with an EIP-4361 payload' },
  'cacao-audience-mismatch': { status: 401, message: 'the CACAO audience is not this sign-in host' },
  'smart-account-unavailable': { status: 503, message: 'smart-account sign-in cannot check the account now: no node of its chain is configured or reachable' },
  'session-required': { status: 401, message: 'this route needs a signed-in browser session; sign in first' },
  'session-ended': { status: 401, message: 'the session has ended (signed out, idle too long, or past its lifetime); sign in again' },
  'second-factor-required': { status: 401, message: 'the sign-in still needs its second factor: POST /v1/totp/verify with a code' },
  'pat-not-accepted': { status: 403, message: 'this route accepts only a browser session, not a personal access token' },
  'cross-site-request': { status: 403, message: 'a cookie-authenticated request must come from the console, API or sign-in origin' },
  'challenge-invalid': { status: 400, message: 'the challenge is unknown, used or expired; start the ceremony again' },
  'passkey-rejected': { status: 401, message: 'the passkey response does not verify' },
  'passkey-unknown': { status: 401, message: 'no account has this passkey; register it first' },
  'passkey-replayed': { status: 401, message: 'the passkey signature counter did not move forward: a replayed assertion or a cloned authenticator' },
  'passkey-exists': { status: 409, message: 'this passkey is already registered' },
  'totp-code-invalid': { status: 401, message: 'the code is wrong' },
  'totp-code-reused': { status: 401, message: 'this code was already used; wait for the next one' },
  'totp-locked': { status: 429, message: 'too many wrong codes; wait and sign in again' },
  'data-key-unavailable': {
    status: 503,
    message: 'this gateway does not hold the data key that sealed the TOTP secret; sign in with a recovery code, or ask the operator to configure the key',
  },
  'totp-already-enrolled': { status: 409, message: 'TOTP is already enrolled for this account' },
  'recovery-rejected': { status: 401, message: 'the recovery key, signature or one-time secret is not right' },
  'recovery-pending': { status: 409, message: 'a recovery of this account is already under way' },
  'recovery-not-ready': { status: 403, message: 'the recovery delay has not passed yet' },
  'wallet-linked-elsewhere': { status: 409, message: 'this wallet already signs in to another account; remove it there first' },
  'last-sign-in-method': { status: 409, message: "this is the account's last passkey or wallet; add another before removing it" },
  'sign-in-method-not-found': { status: 404, message: 'the signed-in account has no such passkey or wallet' },
  'identity-provider-not-configured': { status: 503, message: 'no identity provider is configured on this gateway' },
  'identity-provider-unavailable': { status: 502, message: 'the identity provider could not be reached; nothing was changed' },
  'identity-provider-rejected': { status: 401, message: "the identity provider's answer does not verify; start the link again" },
  'identity-linked-elsewhere': { status: 409, message: 'this identity already names another account' },
  'totp-not-pending': { status: 409, message: 'no code is owed: nothing is waiting for a TOTP code' },

  // Verification, research status, applications and billing
  'prepaid-card-not-accepted': { status: 403, message: 'the registered card is prepaid, which is not accepted; register a credit or debit card' },
  'screening-expired': { status: 403, message: 'the AML/CTF screening behind the rung has expired; an operator must screen again' },
  'screening-required': { status: 403, message: 'the rung needs a clean AML/CTF screening, and none is recorded' },
  'policy-version-mismatch': { status: 409, message: 'policyVersion is not the acceptable-use policy version in force' },
  'application-not-found': { status: 404, message: 'no such research application' },
  'application-decided': { status: 409, message: 'the application has been decided already' },
  'unknown-sku': { status: 404, message: 'no such sku in the billing catalog' },
  'sku-not-purchasable': { status: 409, message: 'this catalog item is listed but not purchasable' },
  'checkout-disabled': { status: 409, message: 'checkout is not enabled in the billing catalog' },
  'request-id-reused': { status: 409, message: 'this requestId was used for a different checkout' },
  'billing-not-configured': { status: 503, message: 'the payment processor is not configured on this gateway' },
  'payment-processor-error': { status: 502, message: 'the payment processor did not answer as expected; nothing was changed' },
  'webhook-signature-invalid': { status: 400, message: 'the webhook signature is missing, wrong or stale; nothing was changed' },
  'webhook-not-ready': { status: 503, message: 'the event names a principal or object not known yet; nothing was changed, a retry can apply it' },

  // Client compatibility (the chat request's fields)
  'unknown-parameter': { status: 400, message: 'the request has a field the gateway does not offer' },
  'multiple-choices-not-supported': { status: 400, message: 'n above 1 is not offered: one answer per request' },
  'logprobs-not-supported': { status: 400, message: 'log probabilities are not returned' },
  'response-format-not-supported': { status: 400, message: 'response_format is not offered; strict JSON output is obtained through a tool call' },
  'audio-not-supported': { status: 400, message: 'the gateway answers text only' },
  'legacy-functions-not-supported': { status: 400, message: 'functions and function_call are not offered; send tools and tool_choice' },
  'web-search-not-supported': { status: 400, message: 'the service runs no tools; run a search tool on your side' },

  // Hardening: forwarding, bounds and guardrails
  // (bounds: listeners and upstream answers)
  'request-timeout': { status: 408, message: 'the request was not received in time; send the head and body without pauses' },
  'headers-too-large': { status: 431, message: 'the request head is larger than the listener accepts' },
  'bad-request': { status: 400, message: 'the request is not valid HTTP' },
  'upstream-answer-too-large': { status: 502, message: 'the upstream answer is larger than the gateway reads; nothing was charged for it' },
  'upstream-usage-malformed': {
    status: 502,
    message: 'the upstream reported usage that is not a count of tokens; the answer is withheld and the worst case charged',
  },
  'nesting-too-deep': { status: 400, message: 'the request nests JSON deeper than the gateway reads' },
  'secret-in-identifier': { status: 400, message: 'an identifier (a name) holds what looks like a credential; names cannot be masked, remove it' },

  // Operations: rate limits, health, shutdown
  'tool-busy': { status: 503, message: 'every graph worker is busy and the queue of waiting calls is full; retry in a moment' },
  'tool-call-too-long': { status: 422, message: 'the tool call ran longer than its budget of worker time and was stopped; ask for less' },
  'rate-limited': { status: 429, message: 'too many requests; retry after the time in retry-after' },
  'not-ready': { status: 503, message: 'this gateway instance is not ready (starting, draining or its store unreachable); retry, another instance may answer' },

  // Receipts log
  'log-range-invalid': { status: 400, message: 'from and to must be tree sizes with 1 <= from <= to <= the latest checkpoint' },
  'log-not-ready': { status: 503, message: 'the receipt log has no signed checkpoint yet; retry in a second' },

  // Agents: MCP, knowledge, discovery
  'invalid-knowledge-query': { status: 400, message: 'the query does not match the expected shape' },
  'knowledge-not-found': { status: 404, message: 'no such entry in the knowledge evidence' },

  // Everything else
  'store-unavailable': { status: 503, message: 'the store cannot be reached; nothing was admitted' },
  'internal-error': { status: 500, message: 'internal error' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

/**
 * A denial code the admission policy defines and this table does not list (a rule added in Rego only). It
 * leaves with the status and message the policy's rule gives it; the brand keeps it from being mistaken
 * for a table code where the table's status or message would be read.
 */
export type PolicyCode = string & { readonly policyDefined: unique symbol };

/**
 * The one error type that stages throw. `message` overrides the table's default with a more specific one;
 * `param` names the request field at fault, the way OpenAI's clients read it (`messages[2].content`).
 */
export class GatewayError extends Error {
  readonly code: ErrorCode | PolicyCode;
  readonly status: number;
  readonly param: string | null;
  constructor(code: ErrorCode, message?: string, options?: { cause?: unknown; param?: string }) {
    super(message ?? ERRORS[code].message, options);
    this.name = 'GatewayError';
    this.code = code;
    this.status = ERRORS[code].status;
    this.param = options?.param ?? null;
  }
}

/**
 * OpenAI's error `type` for a status, so each client raises its typed error and reads the same fields it
 * reads from OpenAI (the SDKs pick the error class by status; `type` and `param` are what they expose).
 */
export function errorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 402) return 'insufficient_quota';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERRORS, code);
}

/**
 * A denial from the policy becomes a GatewayError. Codes, statuses and messages are the policy's data (each
 * deny rule's METADATA): a code the table knows keeps the table's status (test/policy/denial-codes.test.ts
 * holds the two in step); a code it does not know — a rule added in Rego only — leaves with the rule's own
 * status when that is a 4xx refusal, else 403, and the rule's message. Never a 500: refusing is the policy
 * working.
 */
export function fromDenial(code: string, message: string, status?: number): GatewayError {
  if (isErrorCode(code)) return new GatewayError(code, message);
  const refusal = Number.isInteger(status) && status! >= 400 && status! < 500 ? status! : 403;
  return Object.assign(new GatewayError('internal-error', message), { code: code as PolicyCode, status: refusal });
}

/**
 * The wire format, the only one: `{error:{code,message}}`, plus OpenAI's `type` and `param`, and the
 * `receiptId` of a call refused or failed after it left a receipt (admission step 3 or later).
 */
export function toWire(
  err: GatewayError,
  receiptId?: string,
): { error: { code: string; message: string; type: string; param: string | null; receiptId?: string } } {
  return { error: { code: err.code, message: err.message, type: errorType(err.status), param: err.param, ...(receiptId ? { receiptId } : {}) } };
}
