/**
 * The request bodies of the sign-in and account routes, as JSON Schemas: the one source of their shapes
 * (validation here; the OpenAPI document and docs/sign-in.md are written from them). Compiled once by ajv.
 * `jsonBody` reads a POST body (415 / 413 / 400 `invalid-json` as every route does) and holds it to its
 * schema, answering 400 `invalid-request` naming the first field that breaks it.
 */
import type { Context } from 'koa';
import { Ajv, type ValidateFunction } from 'ajv';
import { GatewayError } from '../errors.js';
import { readOptionalJson } from '../http/read-json.js';
import { fieldPath } from '../http/field-path.js';

const base64url = { type: 'string', pattern: '^[A-Za-z0-9_-]*={0,2}$', maxLength: 65536 } as const;

export const SCHEMAS = {
  /** POST /v1/account/api-token */
  issueToken: {
    type: 'object',
    additionalProperties: false,
    required: ['label'],
    properties: { label: { type: 'string', minLength: 1, maxLength: 100 } },
  },
  /** POST /v1/account/api-token/revoke */
  revokeToken: {
    type: 'object',
    additionalProperties: false,
    required: ['id'],
    properties: { id: { type: 'string', minLength: 1, maxLength: 64 } },
  },
  /** POST /v1/session/end, /v1/session/end-all: no fields (an empty body or `{}`). */
  empty: { type: 'object', additionalProperties: false, properties: {} },
  /** POST /v1/passkey/register/options */
  passkeyRegisterOptions: {
    type: 'object',
    additionalProperties: false,
    properties: { username: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[^\\u0000-\\u001f]+$' } },
  },
  /** POST /v1/passkey/login/options */
  passkeyLoginOptions: { type: 'object', additionalProperties: false, properties: {} },
  /** POST /v1/passkey/register/verify: what @simplewebauthn/browser's startRegistration returns. */
  registrationResponse: {
    type: 'object',
    required: ['id', 'rawId', 'response', 'type'],
    properties: {
      id: base64url,
      rawId: base64url,
      type: { const: 'public-key' },
      response: {
        type: 'object',
        required: ['clientDataJSON', 'attestationObject'],
        properties: { clientDataJSON: base64url, attestationObject: base64url, transports: { type: 'array', items: { type: 'string' } } },
      },
      clientExtensionResults: { type: 'object' },
      authenticatorAttachment: { type: 'string' },
    },
  },
  /** POST /v1/passkey/login/verify: what @simplewebauthn/browser's startAuthentication returns. */
  authenticationResponse: {
    type: 'object',
    required: ['id', 'rawId', 'response', 'type'],
    properties: {
      id: base64url,
      rawId: base64url,
      type: { const: 'public-key' },
      response: {
        type: 'object',
        required: ['clientDataJSON', 'authenticatorData', 'signature'],
        properties: { clientDataJSON: base64url, authenticatorData: base64url, signature: base64url, userHandle: base64url },
      },
      clientExtensionResults: { type: 'object' },
      authenticatorAttachment: { type: 'string' },
    },
  },
  /** POST /v1/siwe/options: the chain the wallet will sign on; defaults to the first of wallet.chainIds. */
  siweOptions: {
    type: 'object',
    additionalProperties: false,
    properties: { chainId: { type: 'integer', minimum: 1 } },
  },
  /**
   * POST /v1/siwe/verify, /v1/passkey/smart-account/verify: the EIP-4361 text exactly as signed, and its hex
   * signature (65 bytes for a key; an ERC-1271 or ERC-6492 signature, a few KB, for a smart account).
   */
  signedMessage: {
    type: 'object',
    additionalProperties: false,
    required: ['message', 'signature'],
    properties: {
      message: { type: 'string', minLength: 1, maxLength: 8192 },
      signature: { type: 'string', pattern: '^0x([0-9a-fA-F]{2})+$', maxLength: 32768 },
    },
  },
  /** POST /v1/cacao/session: the signed CACAO as base64url (no padding) of its dag-cbor block (CAIP-74). */
  cacaoSession: {
    type: 'object',
    additionalProperties: false,
    required: ['cacao'],
    properties: { cacao: { type: 'string', pattern: '^[A-Za-z0-9_-]+$', maxLength: 16384 } },
  },
  /** POST /v1/account/sign-in-methods/remove: exactly one of a passkey's credential id or a wallet's account id. */
  removeSignInMethod: {
    type: 'object',
    additionalProperties: false,
    properties: {
      passkey: { type: 'string', minLength: 1, maxLength: 1024 },
      wallet: { type: 'string', pattern: '^(eoa|sca:[0-9]{1,20}):0x[0-9a-f]{40}$' },
    },
    minProperties: 1,
    maxProperties: 1,
  },
  /** POST /v1/totp/verify */
  totpVerify: {
    type: 'object',
    additionalProperties: false,
    properties: {
      code: { type: 'string', pattern: '^[0-9]{6}$' },
      recoveryCode: { type: 'string', minLength: 1, maxLength: 64 },
    },
    // Exactly one of the two.
    minProperties: 1,
    maxProperties: 1,
  },
  /** POST /v1/totp/enrol/confirm */
  totpConfirm: {
    type: 'object',
    additionalProperties: false,
    required: ['code'],
    properties: { code: { type: 'string', pattern: '^[0-9]{6}$' } },
  },
  /** POST /v1/recovery/setup */
  recoverySetup: {
    type: 'object',
    additionalProperties: false,
    required: ['publicKey'],
    properties: { publicKey: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' } },
  },
  /** POST /v1/recovery/start */
  recoveryStart: {
    type: 'object',
    additionalProperties: false,
    required: ['publicKey', 'challenge', 'signature', 'recoverySecret'],
    properties: {
      publicKey: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' },
      challenge: { type: 'string', pattern: '^[A-Za-z0-9_-]{16,128}$' },
      signature: { type: 'string', pattern: '^[A-Za-z0-9_-]{86}$' },
      recoverySecret: { type: 'string', minLength: 1, maxLength: 64 },
    },
  },
  /** POST /v1/recovery/complete */
  recoveryComplete: {
    type: 'object',
    additionalProperties: false,
    required: ['publicKey', 'challenge', 'signature'],
    properties: {
      publicKey: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' },
      challenge: { type: 'string', pattern: '^[A-Za-z0-9_-]{16,128}$' },
      signature: { type: 'string', pattern: '^[A-Za-z0-9_-]{86}$' },
    },
  },
} as const;

export type SchemaName = keyof typeof SCHEMAS;

const ajv = new Ajv({ allErrors: false, strict: true });
const compiled = new Map<SchemaName, ValidateFunction>((Object.keys(SCHEMAS) as SchemaName[]).map((name) => [name, ajv.compile(SCHEMAS[name] as object)]));

/** Holds a value to a schema: 400 `invalid-request` naming the field that breaks it. */
export function shaped<T>(name: SchemaName, value: unknown): T {
  const check = compiled.get(name)!;
  if (check(value)) return value as T;
  const e = check.errors![0]!;
  const where = fieldPath(e.instancePath) || 'body';
  const field =
    e.keyword === 'additionalProperties' ? `${where === 'body' ? '' : `${where}.`}${(e.params as { additionalProperty: string }).additionalProperty}` : where;
  const message = e.keyword === 'additionalProperties' ? `unknown field "${field}"` : `${field} ${e.message ?? 'is not allowed'}`;
  throw new GatewayError('invalid-request', message);
}

/** Reads a JSON POST body (no body at all counts as `{}`, whatever the content-type) and holds it to its schema. */
export async function jsonBody<T>(ctx: Context, limitBytes: number, name: SchemaName): Promise<T> {
  return shaped<T>(name, (await readOptionalJson(ctx, limitBytes)) ?? {});
}
