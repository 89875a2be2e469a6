/**
 * {auth_url}/sign-in, every sign-in method of the auth host: a passkey (sign in, or create an account);
 * through an injected Ethereum wallet (EIP-1193) SIWE for an ordinary key, a passkey-owned smart account on
 * its chain (ERC-1271, or ERC-6492 before deployment), or a DID/CACAO (did:pkh); the TOTP or recovery code a
 * second factor asks for; and recovery. Every step is a documented auth-host route; on success the page
 * goes back to `?return=` when that is an address of this deployment, else to the console.
 */
import { startAuthentication, startRegistration, browserSupportsWebAuthn } from '@simplewebauthn/browser';
import { createSiweMessage } from 'viem/siwe';
import { Cacao, CacaoBlock, SiweMessage } from '@didtools/cacao';
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

/**
 * One step at a time: while a second factor is owed only its prompt is shown; the sign-in methods are hidden
 * (and with them every button that would start another sign-in over the half-done one).
 */
function askSecondFactor(asking: boolean): void {
  $('#methods').hidden = asking;
  $('#totp').hidden = !asking;
  if (asking) {
    $('#totp-code').focus();
    announce('Enter your two-factor code.');
  }
}

function afterPrimary(result: SignedIn): void {
  if (result.secondFactor === 'totp') {
    askSecondFactor(true);
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

function injectedWallet(): Eip1193 {
  const wallet = (window as unknown as { ethereum?: Eip1193 }).ethereum;
  if (!wallet) throw new Error('no Ethereum wallet found in this browser');
  return wallet;
}

/** The wallet's first account and the chain it is on. */
async function walletAccount(wallet: Eip1193): Promise<{ address: `0x${string}`; chainId: number }> {
  const [address] = (await wallet.request({ method: 'eth_requestAccounts' })) as `0x${string}`[];
  if (!address) throw new Error('the wallet shared no account');
  const chainId = Number.parseInt((await wallet.request({ method: 'eth_chainId' })) as string, 16);
  return { address, chainId };
}

/** The EIP-4361 text of the server's fields for `address` (viem writes it). */
function siweText(address: `0x${string}`, o: SiweOptions): string {
  return createSiweMessage({
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
}

/**
 * SIWE with an injected wallet: the server says which fields to sign (its nonce, its domain and URI, a chain
 * it accepts), viem writes the EIP-4361 text, the wallet signs it, the server checks both.
 */
async function walletSignIn(): Promise<void> {
  const wallet = injectedWallet();
  const { address, chainId } = await walletAccount(wallet);
  const o = await call<SiweOptions>('auth', 'POST', '/v1/siwe/options', { chainId });
  const message = siweText(address, o);
  const signature = await wallet.request({ method: 'personal_sign', params: [message, address] });
  afterPrimary(await call<SignedIn>('auth', 'POST', '/v1/siwe/verify', { message, signature }));
}

/**
 * A passkey-owned smart account: the same message on the smart account's chain (the server names it), signed
 * by the wallet that holds the account. Its signature is whatever the account's ERC-1271 check takes, or
 * that wrapped as ERC-6492 while the account is not deployed; the server asks a node of the chain.
 */
async function smartAccountSignIn(): Promise<void> {
  const wallet = injectedWallet();
  const { address } = await walletAccount(wallet);
  const o = await call<SiweOptions>('auth', 'POST', '/v1/passkey/smart-account/options', {});
  const message = siweText(address, o);
  const signature = await wallet.request({ method: 'personal_sign', params: [message, address] });
  afterPrimary(await call<SignedIn>('auth', 'POST', '/v1/passkey/smart-account/verify', { message, signature }));
}

const base64url = (bytes: Uint8Array): string =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');

/**
 * DID/CACAO: a CAIP-74 CACAO for the wallet's `did:pkh`, its payload an EIP-4361 message with the server's
 * nonce, this host as domain and the auth origin as audience, signed by the wallet (EIP-191). @didtools/cacao
 * writes the message and the dag-cbor block; the block goes to the server as base64url.
 */
async function cacaoSignIn(): Promise<void> {
  const wallet = injectedWallet();
  const { address, chainId } = await walletAccount(wallet);
  const { nonce } = await call<{ nonce: string }>('auth', 'POST', '/v1/siwe/nonce', {});
  const auth = new URL(origins().auth);
  const siwe = new SiweMessage({
    domain: auth.host,
    address: address.toLowerCase(),
    statement: 'Sign in to portcullis.',
    uri: auth.origin,
    version: '1',
    nonce,
    issuedAt: new Date().toISOString(),
    expirationTime: new Date(Date.now() + 5 * 60_000).toISOString(),
    chainId: String(chainId),
  });
  siwe.signature = (await wallet.request({ method: 'personal_sign', params: [siwe.signMessage(), address] })) as string;
  const block = await CacaoBlock.fromCacao(Cacao.fromSiweMessage(siwe));
  afterPrimary(await call<SignedIn>('auth', 'POST', '/v1/cacao/session', { cacao: base64url(block.bytes) }));
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
bind('#wallet-sign-in', walletSignIn);
bind('#smart-account-sign-in', smartAccountSignIn);
bind('#cacao-sign-in', cacaoSignIn);
// The wallet methods are always offered; without a wallet in this browser they say why they cannot run.
if (!(window as unknown as { ethereum?: unknown }).ethereum) {
  $('#no-wallet').hidden = false;
  for (const id of ['#wallet-sign-in', '#smart-account-sign-in', '#cacao-sign-in']) ($(id) as HTMLButtonElement).disabled = true;
}

$('#totp-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.currentTarget as HTMLFormElement;
  const button = form.querySelector('button') as HTMLButtonElement;
  const code = ((new FormData(form).get('code') as string | null) ?? '').trim();
  // Six digits are a code from the app; anything else is one of the recovery codes shown at enrolment.
  const body = /^\d{6}$/.test(code) ? { code } : { recoveryCode: code };
  void busy(button, errorBox, async () => afterPrimary(await call<SignedIn>('auth', 'POST', '/v1/totp/verify', body)));
});

// Another way: the half-done sign-in is ended (its session only ever allowed the code check), the methods return.
const cancel = $('#totp-cancel') as HTMLButtonElement;
cancel.addEventListener(
  'click',
  () =>
    void busy(cancel, errorBox, async () => {
      await call('auth', 'POST', '/v1/session/end', {});
      ($('#totp-form') as HTMLFormElement).reset();
      askSecondFactor(false);
      $('#passkey-sign-in').focus();
      announce('Choose how to sign in.');
    }),
);

// A reload while the code is owed comes back to the code, not to methods that would start over.
void call<{ valid: boolean; secondFactor?: string }>('auth', 'GET', '/v1/session')
  .then((s) => {
    if (!s.valid && s.secondFactor === 'totp') askSecondFactor(true);
  })
  // Unanswered, the methods simply stay offered: the first one used reports what is wrong.
  .catch(() => undefined);

/**
 * Recovery: prove the phrase (a signature of a fresh challenge) and, to start, the one-time secret; the
 * server holds the recovery for its delay, then completing it signs in and leads to Security to add a passkey.
 */
const recoveryForm = $('#recovery-form') as HTMLFormElement;
recoveryForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const submitter = event.submitter as HTMLButtonElement;
  const data = new FormData(recoveryForm);
  const result = $('#recovery-result');
  void busy(submitter, errorBox, async () => {
    const key = await recoveryKey((data.get('phrase') as string | null) ?? '');
    const { challenge } = await call<{ challenge: string }>('auth', 'POST', '/v1/recovery/challenge', {});
    const proof = { publicKey: key.publicKey, challenge, signature: await key.sign(recoveryMessage(origins().auth, challenge)) };
    if (submitter.value === 'start') {
      const recoverySecret = ((data.get('secret') as string | null) ?? '').trim();
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
