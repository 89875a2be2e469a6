/**
 * Secrets of sign-in never reach a log or an error: session ids, PATs, TOTP secrets and codes, recovery
 * codes, the recovery phrase and its one-time secret. A whole life of an account runs with a debug-level
 * logger capturing every line — refusals included — and none of them appears.
 */
import { expect } from 'chai';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { Browser } from '../helpers/browser.js';
import { login, newPerson } from '../helpers/passkey.js';
import { startRecovery } from '../helpers/recovery.js';
import { createLogger } from '../../src/log.js';
import { codeAt } from '../../src/totp/codes.js';
import { newPhrase, recoveryKey } from '../../src/recovery/phrase.js';

describe('sign-in secrets stay out of logs and errors', () => {
  let gw: TestGateway;
  const lines: string[] = [];
  const answers: string[] = [];
  before(async () => {
    gw = await startTestGateway({ log: createLogger('debug', (l) => void lines.push(l)) });
  });
  after(() => gw.close());

  it('a whole account life, refusals included', async () => {
    const secrets: string[] = [];
    const keep = (a: { body: unknown }) => answers.push(JSON.stringify(a.body));
    const b = new Browser(gw, gw.origins.auth);
    const { a } = await newPerson(b, 'ada');
    secrets.push(b.cookie!);
    const enrol = await b.post('auth', '/v1/totp/enrol');
    secrets.push(enrol.body.secret);
    const confirm = await b.post('auth', '/v1/totp/enrol/confirm', { code: codeAt(enrol.body.secret, Date.now()) });
    secrets.push(...confirm.body.recoveryCodes);
    const phrase = newPhrase();
    const setup = await b.post('auth', '/v1/recovery/setup', { publicKey: recoveryKey(phrase).publicKey });
    secrets.push(phrase, setup.body.recoverySecret);
    b.origin = gw.origins.console;
    const issued = await b.post('api', '/v1/account/api-token', { label: 'agent' });
    secrets.push(issued.body.token);

    // Refusals, each carrying a secret in its request.
    const c = new Browser(gw, gw.origins.auth);
    await login(c, a);
    secrets.push(c.cookie!);
    keep(await c.post('auth', '/v1/totp/verify', { code: '000000' }));
    keep(await c.post('auth', '/v1/totp/verify', { recoveryCode: 'wxyz-wxyz-wxyz-wxyz' }));
    keep(await c.post('auth', '/v1/totp/verify', { recoveryCode: confirm.body.recoveryCodes[0] }));
    keep(await startRecovery(new Browser(gw), phrase, 'wrong-secret'));
    keep(await startRecovery(new Browser(gw), phrase, setup.body.recoverySecret));
    const forged = new Browser(gw);
    forged.cookie = `${b.cookie!.slice(0, -4)}AAAA`;
    secrets.push(forged.cookie);
    keep(await forged.get('api', '/v1/account/api-tokens'));
    keep(await b.post('api', '/v1/account/api-token/revoke', { id: issued.body.token }));
    b.origin = 'https://evil.example';
    keep(await b.post('api', '/v1/account/api-token', { label: issued.body.token }));

    const all = lines.join('\n') + answers.join('\n');
    expect(lines.length).to.be.greaterThan(0);
    for (const s of secrets) expect(all, 'a secret leaked').to.not.contain(s);
    for (const s of secrets.filter((x) => x.includes('-'))) expect(all).to.not.contain(s.replace(/-/g, ''));
  });
});
