/**
 * The request shapes of the research and billing routes, as JSON Schemas compiled once by ajv: the one
 * source for validation and for the shapes docs/billing.md and docs/api.md write down. Strict: unknown
 * fields are refused with their name. What depends on the live configuration (task names, the AUP version
 * in force, the catalog's skus) is checked after the shape, against the runtime.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { GatewayError } from '../errors.js';
import { fieldPath } from '../http/field-path.js';

const id = { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,62}$' } as const;
const taskList = { type: 'array', minItems: 1, maxItems: 16, uniqueItems: true, items: { type: 'string', pattern: '^[a-z][a-z0-9-]{0,62}$' } } as const;

/** POST /v1/research/ekyc/start */
export const ekycStartSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['scopeId', 'tasks'],
  properties: { scopeId: id, tasks: taskList },
} as const;

/** POST /v1/research/applications */
export const applicationSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['verificationMode', 'policyVersion', 'consent', 'authorizedResearch', 'purpose', 'scope'],
  properties: {
    /** The rung the application is made under: card or identity (self-serve), business or contracted (operator review). */
    verificationMode: { enum: ['card', 'identity', 'business', 'contracted'] },
    /** The acceptable-use policy version the applicant read: must be the one in force. */
    policyVersion: { type: 'string', minLength: 1, maxLength: 64 },
    consent: {
      type: 'object',
      additionalProperties: false,
      required: ['acceptableUse', 'localExecutionBoundary'],
      properties: {
        /** Consent to the acceptable-use policy of `policyVersion`. */
        acceptableUse: { const: true },
        /** The service runs no tools: tool calls come back to the client, which runs them under its own authority. */
        localExecutionBoundary: { const: true },
      },
    },
    authorizedResearch: {
      type: 'object',
      additionalProperties: false,
      required: ['authorization', 'targets'],
      properties: {
        /** On what authority the targets are researched. */
        authorization: { enum: ['owned', 'written-permission', 'bug-bounty', 'contract'] },
        /** A reference to that authority: a programme URL, contract or permission letter reference. */
        reference: { type: 'string', minLength: 1, maxLength: 500 },
        targets: {
          type: 'array',
          minItems: 1,
          maxItems: 50,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['kind', 'identifier'],
            properties: {
              kind: { enum: ['repository', 'domain', 'application', 'binary', 'network', 'other'] },
              identifier: { type: 'string', minLength: 1, maxLength: 500 },
            },
          },
        },
      },
    },
    /** What the research is for, in the applicant's words. */
    purpose: { type: 'string', minLength: 10, maxLength: 4000 },
    /** The scope applied for: an id and the tasks it should approve. */
    scope: {
      type: 'object',
      additionalProperties: false,
      required: ['id', 'tasks'],
      properties: { id, tasks: taskList },
    },
  },
} as const;

/** POST /v1/billing/checkout */
export const checkoutSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['sku', 'requestId'],
  properties: {
    sku: { type: 'string', pattern: '^[a-z][a-z0-9-]{0,62}$' },
    /** The client's id for this purchase: the same id answers the same checkout session. */
    requestId: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$' },
  },
} as const;

const ajv = new Ajv({ allErrors: false, strict: true });
const compiled = {
  ekycStart: ajv.compile(ekycStartSchema),
  application: ajv.compile(applicationSchema),
  checkout: ajv.compile(checkoutSchema),
} satisfies Record<string, ValidateFunction>;

function describe(e: ErrorObject): string {
  const at = fieldPath(e.instancePath) || 'body';
  if (e.keyword === 'additionalProperties') return `${at}: unknown field ${JSON.stringify((e.params as { additionalProperty: string }).additionalProperty)}`;
  if (e.keyword === 'required') return `${at}: missing field ${JSON.stringify((e.params as { missingProperty: string }).missingProperty)}`;
  return `${at} ${e.message ?? 'is invalid'}`;
}

/** Validates a body against one of the shapes; throws 400 `invalid-request` naming the field. */
export function checkShape<T>(shape: keyof typeof compiled, body: unknown): T {
  const validate = compiled[shape];
  if (!validate(body)) throw new GatewayError('invalid-request', describe(validate.errors![0]!));
  return body as T;
}
