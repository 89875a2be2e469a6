/**
 * The checks every wallet sign-in makes of its EIP-4361 message before any signature is looked at: the
 * message is parsed and validated by viem's SIWE utilities (never by hand), then held against this auth
 * host: the domain must be the auth origin's authority (`host[:port]`, and its scheme if the message names
 * one), the URI must be on the auth origin,
 * the chain id must be one the method accepts, and the message must be inside its validity window. Each
 * failure has its own error code, so a person (or their wallet's developer) learns which field is wrong.
 */
import { parseSiweMessage, validateSiweMessage, type SiweMessage } from 'viem/siwe';
import { GatewayError, type ErrorCode } from '../errors.js';

export interface Site {
  /** The auth host's public origin, e.g. http://localhost:8081 or https://auth.example.com. */
  authOrigin: string;
  chainIds: readonly number[];
  now: Date;
  /** The code for a URI off the auth origin; a CACAO calls the same field its audience. */
  uriMismatch?: ErrorCode;
}

export type CheckedMessage = SiweMessage & { issuedAt: Date };

function originOf(uri: string): string | null {
  try {
    return new URL(uri).origin;
  } catch {
    return null;
  }
}

export function checkMessage(message: string, site: Site): CheckedMessage {
  const m = parseSiweMessage(message);
  if (!m.domain || !m.address || !m.uri || !m.version || m.chainId === undefined || !m.nonce || !m.issuedAt) {
    throw new GatewayError('wallet-message-invalid', 'the message lacks a field EIP-4361 requires (domain, address, URI, version, chain id, nonce, issued at)');
  }
  for (const [name, at] of [
    ['Issued At', m.issuedAt],
    ['Expiration Time', m.expirationTime],
    ['Not Before', m.notBefore],
  ] as const) {
    if (at && Number.isNaN(at.getTime())) throw new GatewayError('wallet-message-invalid', `${name} is not an RFC 3339 date-time`);
  }
  const auth = new URL(site.authOrigin);
  // The scheme is optional in EIP-4361; when the message names one it must be the auth origin's.
  if (m.domain !== auth.host || (m.scheme !== undefined && `${m.scheme}:` !== auth.protocol)) throw new GatewayError('wallet-domain-mismatch');
  if (originOf(m.uri) !== auth.origin) throw new GatewayError(site.uriMismatch ?? 'wallet-uri-mismatch');
  if (!site.chainIds.includes(m.chainId)) {
    throw new GatewayError('wallet-chain-not-allowed', `chain id ${m.chainId} is not accepted here; use ${site.chainIds.join(', ')}`);
  }
  if (m.expirationTime && site.now >= m.expirationTime) throw new GatewayError('wallet-message-expired');
  if (m.notBefore && site.now < m.notBefore) throw new GatewayError('wallet-message-not-yet-valid');
  // The library's own rules (version 1, an 8+ alphanumeric nonce, a well-formed address, the window again).
  if (!validateSiweMessage({ message: m, domain: auth.host, time: site.now })) {
    throw new GatewayError('wallet-message-invalid', 'the message breaks EIP-4361 (version must be 1, the nonce 8 or more letters and digits)');
  }
  return m as CheckedMessage;
}
