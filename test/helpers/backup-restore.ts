/**
 * The two backup-and-restore suites (one redis-server, a Redis Cluster) differ in how they copy and restore
 * the append-only files, not in what a client must find afterwards. This module holds what they share:
 * the state a client holds before the copy (credits, a PAT, a person signed in with a passkey and TOTP),
 * paid calls kept in flight while the copy is taken, a checkpoint a reviewer kept from before it, and the
 * one check of a restored gateway: every receipt answered before the copy, the token, the session, the
 * TOTP enrolment, whole balances, spent = the receipts' charges, and a log consistent with the checkpoint.
 */
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestGateway } from './gateway.js';
import { Browser } from './browser.js';
import { login, newPerson, type SoftAuthenticator } from './passkey.js';
import { body } from './billing.js';
import { cli } from './cli.js';
import { until } from './wait.js';
import { codeAt } from '../../src/totp/codes.js';

/** The browser-facing origins both gateways (the copied one and the restored one) are configured with. */
export const ORIGINS = {
  PORTCULLIS_AUTH_URL: 'http://localhost:28081',
  PORTCULLIS_CONSOLE_URL: 'http://localhost:28082',
  PORTCULLIS_API_URL: 'http://localhost:28080',
};

const enc = encodeURIComponent;

/** What a client holds before the copy. */
export interface Holdings {
  principal: { id: string; token: string };
  granted: number;
  person: Browser;
  passkey: SoftAuthenticator;
  personId: string;
  totpSecret: string;
}

/** A principal granted credits (under `operationId`), and a person with a passkey, a session and TOTP enrolled at `now`. */
export async function holdings(gw: TestGateway, now: number, operationId: string): Promise<Holdings> {
  const principal = await gw.principal();
  const granted = 50_000_000;
  expect((await gw.admin('POST', `/principals/${enc(principal.id)}/credits`, { microUSD: granted, operationId })).status).to.equal(201);
  const person = new Browser(gw);
  const { a, principalId } = await newPerson(person);
  const { secret } = (await person.post('auth', '/v1/totp/enrol')).body;
  expect((await person.post('auth', '/v1/totp/enrol/confirm', { code: codeAt(secret, now) })).status).to.equal(200);
  return { principal, granted, person, passkey: a, personId: principalId, totpSecret: secret };
}

/** Paid calls in flight (four at a time) until `stop()`, which resolves with how many were made. */
export function paidCalls(gw: TestGateway, token: string): { answered: Array<{ id: string; at: number }>; stop(): Promise<number> } {
  const answered: Array<{ id: string; at: number }> = [];
  let running = true;
  let calls = 0;
  const worker = async () => {
    while (running) {
      const r = await gw.chat(token, body());
      calls++;
      if (r.status === 200) answered.push({ id: r.body.receiptId as string, at: Date.now() });
    }
  };
  const workers = Array.from({ length: 4 }, worker);
  return {
    answered,
    async stop() {
      running = false;
      await Promise.all(workers);
      return calls;
    },
  };
}

/** Resolves once `n` calls have been answered. */
export async function answeredAtLeast(calls: { answered: unknown[] }, n: number): Promise<void> {
  await until(() => calls.answered.length >= n, { what: `${n} paid calls answered`, everyMs: 5 });
}

/** Writes to `file` the gateway's signed checkpoint, once it covers some leaves: a checkpoint a reviewer kept. */
export async function keepCheckpoint(gw: TestGateway, file: string): Promise<void> {
  const signed = async () => (await fetch(`${gw.apiUrl}/v1/receipts/log/checkpoint`)).text();
  const kept = await until(
    async () => {
      const text = await signed();
      return /\n[1-9]\d*\n/.test(text) ? text : null;
    },
    { what: 'a signed checkpoint over some leaves' },
  );
  writeFileSync(file, kept);
}

/**
 * The one check of a restored gateway `gw2`: every receipt in `mustHave` is there; the PAT, the browser
 * session and the TOTP enrolment still work; the balance is whole, and once the reservations the copy caught
 * in flight expire (`advance` moves the gateways' clock), spent = what the receipts of `day` charged; and
 * `portcullis receipt audit` finds the restored log consistent with `checkpoint`, signed by `receiptKey`.
 */
export async function expectRestored(
  gw2: TestGateway,
  h: Holdings,
  opts: { mustHave: string[]; day: string; now: () => number; advance(ms: number): void; checkpoint: string; receiptKey: string; work: string },
): Promise<void> {
  // Every receipt answered before the copy began is there.
  for (const id of opts.mustHave) expect((await gw2.admin('GET', `/receipts/${id}`)).status, id).to.equal(200);
  // The token, the browser session and the TOTP enrolment still work.
  expect((await gw2.chat(h.principal.token, body())).status).to.equal(200);
  const again = new Browser(gw2);
  again.cookie = h.person.cookie;
  expect((await again.get('api', '/v1/session')).body).to.deep.include({ valid: true, principalId: h.personId });
  opts.advance(30_000); // the next TOTP step: the enrolling code's step was used
  const signIn = new Browser(gw2);
  expect((await login(signIn, h.passkey)).verify.body.secondFactor).to.equal('totp');
  expect((await signIn.post('auth', '/v1/totp/verify', { code: codeAt(h.totpSecret, opts.now()) })).status).to.equal(200);

  // Balances whole; once the reservations the copy caught in flight expire, spent = what the receipts charged.
  const balance = async () => (await gw2.admin('GET', `/principals/${enc(h.principal.id)}/billing`)).body.balances[0] as Record<string, number>;
  const b = await balance();
  expect(b['availableMicroUSD']).to.equal(b['grantedMicroUSD']! - b['spentMicroUSD']! - b['reservedMicroUSD']!);
  expect(b['grantedMicroUSD']).to.equal(h.granted);
  opts.advance(2 * 3_600_000);
  const settled = await balance();
  expect(settled['reservedMicroUSD']).to.equal(0);
  const receipts = (await gw2.admin('GET', `/principals/${enc(h.principal.id)}/receipts?day=${opts.day}`)).body.data as Array<Record<string, number>>;
  expect(settled['spentMicroUSD']).to.equal(receipts.reduce((n, r) => n + r['chargedMicroUSD']!, 0));
  expect(settled['availableMicroUSD']).to.equal(h.granted - settled['spentMicroUSD']!);

  // The restored log extends the checkpoint published before the copy.
  const keyFile = join(opts.work, 'receipt-key.pem');
  writeFileSync(keyFile, opts.receiptKey);
  const audit = await cli(['receipt', 'audit', '--from', opts.checkpoint, '--to', 'latest', '--key', keyFile, '--url', gw2.apiUrl]);
  expect(audit.code, audit.stderr + audit.stdout).to.equal(0);
  expect(audit.stdout).to.match(/^consistent: /m);
}
