/**
 * The request bodies of the wallet sign-in routes, as JSON Schemas (the one source of their shapes; the
 * docs quote them), compiled once by ajv. Unknown fields are refused by name. Limits are generous for what
 * honest clients send (an ERC-6492 signature carries the deploy call and a WebAuthn assertion, a few KB)
 * and keep a sign-in from being a way to make the gateway hash megabytes.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { GatewayError } from '../errors.js';
import { fieldPath } from '../stages/chat-schema.js';

export const SIWE_OPTIONS_BODY = {
  $id: 'siwe-options',
  type: 'object',
  additionalProperties: false,
  properties: { chainId: { type: 'integer', minimum: 1, description: 'The chain the wallet will sign on; defaults to the first of wallet.chainIds.' } },
} as const;

export const EMPTY_BODY = { $id: 'empty', type: 'object', additionalProperties: false, properties: {} } as const;

/** `{message, signature}`: what /v1/siwe/verify and /v1/passkey/smart-account/verify take. */
export const SIGNED_MESSAGE_BODY = {
  $id: 'signed-message',
  type: 'object',
  additionalProperties: false,
  required: ['message', 'signature'],
  properties: {
    message: { type: 'string', minLength: 1, maxLength: 8192, description: 'The EIP-4361 message exactly as signed.' },
    signature: { type: 'string', pattern: '^0x([0-9a-fA-F]{2})+$', maxLength: 32768, description: 'Hex; 65 bytes for an EOA, ERC-1271 or ERC-6492 bytes for a smart account.' },
  },
} as const;

/** `{cacao}`: what /v1/cacao/session takes. */
export const CACAO_BODY = {
  $id: 'cacao-session',
  type: 'object',
  additionalProperties: false,
  required: ['cacao'],
  properties: { cacao: { type: 'string', pattern: '^[A-Za-z0-9_-]+$', maxLength: 16384, description: 'The signed CACAO as base64url (no padding) of its dag-cbor block.' } },
} as const;

const ajv = new Ajv({ allErrors: false, strict: true });
const compiled = new Map<string, ValidateFunction>();

/** Checks a parsed body against one of the schemas above; the first problem becomes `invalid-request`. */
export function checkBody<T>(schema: { $id: string }, body: unknown): T {
  let validate = compiled.get(schema.$id);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema.$id, validate);
  }
  if (validate(body)) return body as T;
  const e = validate.errors![0]!;
  const field = fieldPath(e.instancePath);
  if (e.keyword === 'additionalProperties') {
    throw new GatewayError('invalid-request', `${field ? `${field}: ` : ''}unknown field "${(e.params as { additionalProperty: string }).additionalProperty}"`);
  }
  throw new GatewayError('invalid-request', `${field || 'body'} ${e.message ?? 'is invalid'}`);
}
