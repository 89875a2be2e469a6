/**
 * What a chat call costs in Redis, as seen on the wire (MONITOR): the job lookup and the principal's
 * rate-limit hit go out together with the token lookup, the job is created in the reservation's script, and
 * the job's end in the settlement's — three round trips, two of them writes. A first call with a token costs
 * one more (its rate-limit hit and job lookup wait for the token's principal).
 *
 * Not counted: the token's "last used" report (src/token-usage), which identify sends without waiting at
 * most once a minute per token — no call waits for it, and a token in steady use sends it once a minute.
 */
import { expect } from 'chai';
import { createClient } from 'redis';
import { startWorld, type World } from '../helpers/world.js';

/** The commands the gateway sent (not those its scripts ran) between two markers, lower-cased. */
async function sentDuring(w: World, act: () => Promise<unknown>): Promise<string[]> {
  const monitor = createClient({ url: w.redis.url });
  const marker = createClient({ url: w.redis.url });
  await Promise.all([monitor.connect(), marker.connect()]);
  const lines: string[] = [];
  await monitor.monitor((line) => lines.push(String(line)));
  await marker.sendCommand(['ECHO', 'act-start']);
  await act();
  await marker.sendCommand(['ECHO', 'act-end']);
  const deadline = Date.now() + 2000;
  while (!lines.some((l) => l.includes('act-end')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  monitor.destroy();
  marker.destroy();
  const from = lines.findIndex((l) => l.includes('act-start'));
  const to = lines.findIndex((l) => l.includes('act-end'));
  return lines
    .slice(from + 1, to)
    .filter((l) => !/\[\d+ lua\]/.test(l))
    .map((l) => l.toLowerCase())
    // The engine's batched writes (running marks, lease renewals) are no call's own.
    .filter((l) => !/"pc:jlease" "\d+"/.test(l) || /pc:j:/.test(l))
    .filter((l) => !/"evalsha" "[0-9a-f]{40}" "1" "pc:" /.test(l))
    // Nor are the receipt log signer's ticks (lease, pending leaves, checkpoint): a call's leaf is sequenced
    // inside its settlement script, which names no log key.
    .filter((l) => !/"pc:log:/.test(l))
    // Nor the once-a-minute "last used" report of a token.
    .filter((l) => !/"evalsha" "[0-9a-f]{40}" "1" "pc:tu:/.test(l));
}

describe('Redis round trips of a chat call (MONITOR)', () => {
  let w: World;
  before(async () => {
    w = await startWorld();
  });
  after(() => w.stop());

  const chat = (token: string, n: number) =>
    w.gw.chat(token, { model: 'shared-general-a', max_tokens: 64, messages: [{ role: 'user', content: `round trips ${n}` }] });

  it('sends the job lookup with the token lookup, creates the job in the reservation and ends it in the settlement', async () => {
    const warm = await w.gw.principal();
    await chat(warm.token, 0); // loads every script, so no NOSCRIPT retry shows below
    const p = await w.gw.principal();
    const show = (lines: string[]) => lines.map((l) => l.slice(0, 160)).join('\n');
    // A token's first call: its job lookup has to wait for the token's principal.
    const first = await sentDuring(w, () => chat(p.token, 1));
    expect(first, show(first)).to.have.length(5);
    expect(first[0]).to.match(/"evalsha_ro" "[0-9a-f]{40}" "3" "pc:th:/);
    expect(first[1]).to.match(/"evalsha" "[0-9a-f]{40}" "2" "pc:rl:/);
    expect(first[2]).to.match(/"hgetall" "pc:j:/);
    const second = await sentDuring(w, async () => expect((await chat(p.token, 2)).status).to.equal(200));
    expect(second, show(second)).to.have.length(5);
    const [lookup, rate, token, reserve, settle] = second as [string, string, string, string, string];
    expect(lookup).to.match(/"hgetall" "pc:j:/);
    expect(rate).to.match(/"evalsha" "[0-9a-f]{40}" "2" "pc:rl:/);
    expect(token).to.match(/"evalsha_ro" "[0-9a-f]{40}" "3" "pc:th:/);
    expect(reserve).to.match(/"evalsha" "[0-9a-f]{40}" "7" "pc:bill:.*"pc:hold:.*"pc:j:/);
    expect(settle).to.match(/"evalsha" "[0-9a-f]{40}" "9" "pc:hold:.*"pc:r:rcpt_.*"pc:j:/);
  });
});
