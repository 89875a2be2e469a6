/**
 * The bench's load runner (bench/harness/load.ts) against a real HTTP server that answers slower than the
 * window lasts: a saturation window that asks for at least one answer keeps going until it has one, so the
 * quick bench never reports "0 answers" for a row that works but is slow on a loaded machine. Without
 * `minAnswers` the same window closes empty, as it did before.
 */
import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runLoad } from '../../bench/harness/load.js';
import { bodyTemplate } from '../../bench/harness/bodies.js';

describe('bench load runner', function () {
  this.timeout(30_000);
  let server: Server;
  let url: string;
  /** How long the server holds every answer, ms: far longer than the windows below. */
  const HOLD_MS = 600;

  before(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.once('end', () => {
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"object":"chat.completion"}');
        }, HOLD_MS);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const body = bodyTemplate({ size: 'large', stream: false });

  it('keeps a saturation window open until it has the answers it asks for, and rates them over the time it ran', async () => {
    const r = await runLoad({ url, headers: {}, body, connections: 2, durationSec: 0.1, minAnswers: 1 });
    expect(r.ok).to.be.at.least(1);
    expect(r.errors).to.equal(0);
    expect(r.extended).to.equal(true);
    // The window ran until the first answer, which the server held for HOLD_MS.
    expect(r.durationSec).to.be.at.least(HOLD_MS / 1000);
    expect(r.rps).to.be.closeTo(r.ok / r.durationSec, 1e-9);
    expect(Number.isFinite(r.latency.p50)).to.equal(true);
  });

  it('closes at its deadline without minAnswers, counting nothing that came after', async () => {
    const r = await runLoad({ url, headers: {}, body, connections: 2, durationSec: 0.1 });
    expect(r.ok).to.equal(0);
    expect(r.extended).to.equal(undefined);
    expect(r.durationSec).to.equal(0.1);
  });

  it('at a fixed rate also times each answer from its scheduled slot, so a wait for a free connection counts', async () => {
    // A server slower than the rate allows: with one connection and an answer every HOLD_MS, every slot after
    // the first is due while the connection is still busy, and the request waits for it before it is written.
    const pairs: Array<[number, number]> = [];
    const r = await runLoad({
      url,
      headers: {},
      body,
      connections: 1,
      durationSec: 1.5,
      rate: 20,
      onAnswer: (_at, ms, fromSlot) => pairs.push([ms, fromSlot]),
    });
    expect(r.ok).to.be.at.least(2);
    expect(r.overloaded).to.equal(true);
    expect(r.fromIntended, 'fixed-rate runs report the open-loop figure').to.be.an('object');
    for (const [fromWrite, fromSlot] of pairs) expect(fromSlot).to.be.at.least(fromWrite);
    // The second answer's request was due at 100 ms but could not be written before the first answer, at
    // 50 + HOLD_MS at the earliest: that wait is in its time from the slot and not in its time from the write.
    const [, second] = pairs;
    expect(second![1] - second![0]).to.be.at.least(HOLD_MS - 100);
    expect(r.fromIntended!.max).to.be.above(r.latency.max);
  });

  it('reports no open-loop figure at saturation, where there is no schedule', async () => {
    const r = await runLoad({ url, headers: {}, body, connections: 1, durationSec: 0.1, minAnswers: 1 });
    expect(r.fromIntended).to.equal(undefined);
  });
});
