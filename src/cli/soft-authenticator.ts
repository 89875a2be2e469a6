/**
 * A software passkey authenticator: what a phone or a security key does in a WebAuthn ceremony, done with
 * a real ES256 (P-256) key from node:crypto — it signs real clientDataJSON and authenticatorData, and
 * answers registration with a CBOR attestation of format `none`. It speaks the JSON that
 * @simplewebauthn/browser's startRegistration / startAuthentication return, so the gateway cannot tell it
 * from a browser.
 *
 * Used by `portcullis passkey sign-in` (a person with curl and no browser: docs/sign-in.md) and by the test
 * suites, which also use its knobs to misbehave (wrong origin, wrong rpID, no user verification, a stale
 * counter). Its key is a secret: `toJSON` is for the file the person keeps, never for a log.
 */
import { createHash, createPrivateKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { encodeCBOR, type CBORType } from '@levischuck/tiny-cbor';

export interface CreationOptions {
  challenge: string;
  rp: { id?: string; name: string };
  user: { id: string; name: string };
}

export interface RequestOptions {
  challenge: string;
  rpId?: string;
}

/** Ways to misbehave, for tests: each defaults to what an honest authenticator does. */
export interface Quirks {
  /** The origin written into clientDataJSON (default: the origin the ceremony runs on). */
  origin?: string;
  /** The rpID whose hash goes into authenticatorData (default: the options' rp id). */
  rpId?: string;
  /** Set the user-verified flag (default true). */
  userVerified?: boolean;
  /** Use this signature counter instead of the next one. */
  counter?: number;
  /** clientDataJSON type (default webauthn.create / webauthn.get). */
  type?: string;
  /** Sign with another key than the registered one. */
  wrongKey?: boolean;
}

export interface SoftAuthenticatorState {
  credentialId: string;
  privateKeyPem: string;
  userHandle: string | null;
  rpId: string | null;
  counter: number;
}

const b64url = (b: Uint8Array | Buffer): string => Buffer.from(b).toString('base64url');
const sha256 = (b: Uint8Array | string): Buffer => createHash('sha256').update(b).digest();

// authenticatorData flags
const UP = 0x01;
const UV = 0x04;
const AT = 0x40;

export class SoftAuthenticator {
  readonly credentialId: Buffer;
  readonly #key: KeyObject;
  userHandle: string | null;
  rpId: string | null;
  counter: number;
  /** Count upwards on each assertion (true), or keep 0 as many platform authenticators do (false). */
  readonly counting: boolean;

  constructor(state?: SoftAuthenticatorState, opts: { counting?: boolean } = {}) {
    this.credentialId = state ? Buffer.from(state.credentialId, 'base64url') : randomBytes(32);
    this.#key = state ? createPrivateKey(state.privateKeyPem) : generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    this.userHandle = state?.userHandle ?? null;
    this.rpId = state?.rpId ?? null;
    this.counter = state?.counter ?? 0;
    this.counting = opts.counting ?? true;
  }

  get id(): string {
    return b64url(this.credentialId);
  }

  toJSON(): SoftAuthenticatorState {
    return {
      credentialId: this.id,
      privateKeyPem: this.#key.export({ type: 'pkcs8', format: 'pem' }).toString(),
      userHandle: this.userHandle,
      rpId: this.rpId,
      counter: this.counter,
    };
  }

  /** The COSE_Key (EC2, ES256) of the public key. */
  #coseKey(): Uint8Array {
    const jwk = this.#key.export({ format: 'jwk' }) as { x: string; y: string };
    return encodeCBOR(
      new Map<number, CBORType>([
        [1, 2], // kty: EC2
        [3, -7], // alg: ES256
        [-1, 1], // crv: P-256
        [-2, new Uint8Array(Buffer.from(jwk.x, 'base64url'))],
        [-3, new Uint8Array(Buffer.from(jwk.y, 'base64url'))],
      ]),
    );
  }

  #authData(rpId: string, flags: number, counter: number, attested?: Uint8Array): Buffer {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter >>> 0);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), count, ...(attested ? [attested] : [])]);
  }

  /** navigator.credentials.create(): the registration response JSON. */
  create(options: CreationOptions, origin: string, quirks: Quirks = {}) {
    const rpId = options.rp.id ?? new URL(origin).hostname;
    const clientDataJSON = Buffer.from(
      JSON.stringify({ type: quirks.type ?? 'webauthn.create', challenge: options.challenge, origin: quirks.origin ?? origin, crossOrigin: false }),
    );
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const attested = Buffer.concat([Buffer.alloc(16) /* AAGUID: none */, idLength, this.credentialId, this.#coseKey()]);
    const flags = UP | AT | (quirks.userVerified === false ? 0 : UV);
    const authData = this.#authData(quirks.rpId ?? rpId, flags, quirks.counter ?? this.counter, attested);
    const attestationObject = encodeCBOR(
      new Map<string, CBORType>([
        ['fmt', 'none'],
        ['attStmt', new Map<string, CBORType>()],
        ['authData', new Uint8Array(authData)],
      ]),
    );
    this.userHandle = options.user.id;
    this.rpId = rpId;
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key' as const,
      response: { clientDataJSON: b64url(clientDataJSON), attestationObject: b64url(attestationObject), transports: ['internal'] },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /** navigator.credentials.get(): the authentication response JSON. */
  get(options: RequestOptions, origin: string, quirks: Quirks = {}) {
    const rpId = options.rpId ?? this.rpId ?? new URL(origin).hostname;
    if (quirks.counter === undefined && this.counting) this.counter += 1;
    const counter = quirks.counter ?? this.counter;
    const clientDataJSON = Buffer.from(
      JSON.stringify({ type: quirks.type ?? 'webauthn.get', challenge: options.challenge, origin: quirks.origin ?? origin, crossOrigin: false }),
    );
    const authData = this.#authData(quirks.rpId ?? rpId, UP | (quirks.userVerified === false ? 0 : UV), counter);
    const key = quirks.wrongKey ? generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey : this.#key;
    // ES256 over authenticatorData || SHA-256(clientDataJSON), DER-encoded as WebAuthn expects.
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), key);
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key' as const,
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        ...(this.userHandle ? { userHandle: this.userHandle } : {}),
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}
