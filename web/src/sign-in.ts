/**
 * {auth_url}/sign-in: sign in or create an account with a passkey, sign in with an injected Ethereum wallet
 * (SIWE), finish a two-factor sign-in with a TOTP or recovery code, or start recovery. Every step is a
 * documented auth-host route; on success the page goes back to `?return=` when that is an address of this
 * deployment, else to the console.
 */
import { startAuthentication, startRegistration, browserSupportsWebAuthn } from '@simplewebauthn/browser';
import { createSiweMessage } from 'viem/siwe';
import { call, origins, safeReturn } from './api.js';
import { $, announce, busy, dateText, showError } from './dom.js';
import { recoveryKey, recoveryMessage } from './recovery-key.js';

const errorBox = $('#error');
const next = safeReturn(new URLSearchParams(location.search).get('return'));

interface SignedIn {
  verified?: boolean;
  principalId?: string;
  /** `totp` when the account has TOTP enrolled: the session is only good for /v1/totp/verify until then. */
  secondFactor?: string;
}

function afterPrimary(result: SignedIn): void {
  if (result.secondFactor === 'totp') {
    $('#totp').hidden = false;
    $('#totp-code').focus();
    announce('Enter your two-factor code.');
    return;
  }
  announce('Signed in.');
  location.assign(next);
}

async function passkeySignIn(): Promise<void> {
  const optionsJSON = await call<Parameters<typeof startAuthentication>[0]['optionsJSON']>('auth', 'POST', '/v1/passkey/login/options', {});
  const response = await startAuthentication({ optionsJSON });
  afterPrimary(await call<SignedIn>('auth', 'POST', '/v1/passkey/login/verify', response));
}

async function passkeyCreate(): Promise<void> {
  const optionsJSON = await call<Parameters<typeof startRegistration>[0]['optionsJSON']>('auth', 'POST', '/v1/passkey/register/options', {});
  const response = await startRegistration({ optionsJSON });
  afterPrimary(await call<SignedIn>('auth', 'POST', '/v1/passkey/register/verify', response));
}

interface Eip1193 {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
}

interface SiweOptions {
  domain: string;
  uri: string;
  chainId: number;
  version: '1';
  statement?: string;
  nonce: string;
  issuedAt: string;
  expirationTime?: string;
}

/**
 * SIWE with an injected wallet: the server says which fields to sign (its nonce, its domain and URI, a chain
 * it accepts), viem writes the EIP-4361 text, the wallet signs it, the server checks both.
 */
async function walletSignIn(): Promise<void> {
  const wallet = (window as unknown as { ethereum?: Eip1193 }).ethereum;
  if (!wallet) throw new Error('no Ethereum wallet found in this browser');
  const [address] = (await wallet.request({ method: 'eth_requestAccounts' })) as `0x${string}`[];
  if (!address) throw new Error('the wallet shared no account');
  const chainId = Number.parseInt((await wallet.request({ method: 'eth_chainId' })) as string, 16);
  const o = await call<SiweOptions>('auth', 'POST', '/v1/siwe/options', { chainId });
  const message = createSiweMessage({
    address,
    chainId: o.chainId,
    domain: o.domain,
    nonce: o.nonce,
    uri: o.uri,
    version: o.version,
    issuedAt: new Date(o.issuedAt),
    ...(o.statement ? { statement: o.statement } : {}),
    ...(o.expirationTime ? { expirationTime: new Date(o.expirationTime) } : {}),
  });
  const signature = await wallet.request({ method: 'personal_sign', params: [message, address] });
  afterPrimary(await call<SignedIn>('auth', 'POST', '/v1/siwe/verify', { message, signature }));
}

function bind(id: string, action: () => Promise<void>): void {
  const button = $(id) as HTMLButtonElement;
  button.addEventListener('click', () => void busy(button, errorBox, action));
}

if (!browserSupportsWebAuthn()) {
  showError(errorBox, new Error('this browser does not support passkeys; use a wallet, or another browser'));
  for (const id of ['#passkey-sign-in', '#passkey-create']) ($(id) as HTMLButtonElement).disabled = true;
}
bind('#passkey-sign-in', passkeySignIn);
bind('#passkey-create', passkeyCreate);
if ((window as unknown as { ethereum?: unknown }).ethereum) {
  $('#wallet').hidden = false;
  bind('#wallet-sign-in', walletSignIn);
}

$('#totp-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.currentTarget as HTMLFormElement;
  const button = form.querySelector('button') as HTMLButtonElement;
  const code = String(new FormData(form).get('code') ?? '').trim();
  // Six digits are a code from the app; anything else is one of the recovery codes shown at enrolment.
  const body = /^\d{6}$/.test(code) ? { code } : { recoveryCode: code };
  void busy(button, errorBox, async () => afterPrimary(await call<SignedIn>('auth', 'POST', '/v1/totp/verify', body)));
});

/**
 * Recovery: prove the phrase (a signature of a fresh challenge) and, to start, the one-time secret; the
 * server holds the recovery for its delay, then completing it signs in and leads to Security to add a passkey.
 */
const recoveryForm = $('#recovery-form') as HTMLFormElement;
recoveryForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const submitter = (event as SubmitEvent).submitter as HTMLButtonElement;
  const data = new FormData(recoveryForm);
  const result = $('#recovery-result');
  void busy(submitter, errorBox, async () => {
    const key = await recoveryKey(String(data.get('phrase') ?? ''));
    const { challenge } = await call<{ challenge: string }>('auth', 'POST', '/v1/recovery/challenge', {});
    const proof = { publicKey: key.publicKey, challenge, signature: await key.sign(recoveryMessage(origins().auth, challenge)) };
    if (submitter.value === 'start') {
      const recoverySecret = String(data.get('secret') ?? '').trim();
      if (!recoverySecret) throw new Error('starting a recovery needs the one-time recovery secret');
      const started = await call<{ completesAt: string }>('auth', 'POST', '/v1/recovery/start', { ...proof, recoverySecret });
      recoveryForm.reset();
      result.textContent = `Recovery started. Come back after ${dateText(started.completesAt)} to complete it; signing in with any method you still have cancels it.`;
      return;
    }
    await call('auth', 'POST', '/v1/recovery/complete', proof);
    recoveryForm.reset();
    location.assign(`${origins().console}/#security`);
  });
});

// The console origin is where a signed-in person lands; show it so a person knows where they are going.
announce(`After signing in you go to ${new URL(next).origin === origins().console ? 'the console' : new URL(next).host}.`);
