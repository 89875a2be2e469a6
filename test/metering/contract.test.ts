/**
 * The meter contract: one suite, run against the memory meter and the Redis meter (on a real redis-server of
 * our own), so the embedded default and the shared ledger keep the same rules: free allowance, rung
 * allowance and ceiling, credits, reserve-then-settle once per call id (with the job's end riding in the
 * settlement's write), expiry sweeps, day rollover, grants, and receipts, each sequenced as a leaf of the receipt log in the same write. Numbers are exact; the clock is injected.
 */
import { expect } from 'chai';
import { MemoryStore } from '../../src/store/memory.js';
import type { Store } from '../../src/store/store.js';
import { MemoryMeter } from '../../src/metering/memory-meter.js';
import { RedisMeter } from '../../src/metering/redis-meter.js';
import { NOTHING_REPORTED, provisionalReservation, type DailyLimits, type Meter, type Reservation, type ReserveRequest } from '../../src/metering/meter.js';
import type { Usage } from '../../src/metering/price.js';
import { receiptLogFor as logFor } from '../../src/app/wire.js';
import { receiptLeafHash } from '../../src/receipts/canonical.js';
import { GatewayError } from '../../src/errors.js';
import { onRedis } from '../helpers/redis-contract.js';
import { MemoryJobStore } from '../../src/jobs/memory-store.js';
import { RedisJobStore } from '../../src/jobs/redis-store.js';
import type { CreateOutcome, JobStore } from '../../src/jobs/store.js';
import type { JobRecord } from '../../src/jobs/job.js';

const PID = 'did:web:portcullis.test:tenant:alice';
const OTHER = 'did:web:portcullis.test:tenant:bob';
const RATES = { inputPerMTok: 900_000, cachedInputPerMTok: 225_000, outputPerMTok: 4_500_000 };
const DAY1 = Date.parse('2030-03-14T23:00:00.000Z');
const HOUR = 3_600_000;

/** 10 input tokens (bound) + 90 max_tokens: 100 tokens, worst case 10 x 0.9 + 90 x 4.5 = 414 micro-USD. */
const WORST = 414;

let seq = 0;
function req(over: Partial<Omit<ReserveRequest, 'limits'>> & { limits?: Partial<DailyLimits> } = {}): ReserveRequest {
  const { limits, ...rest } = over;
  return {
    callId: `call-${++seq}`,
    principalId: PID,
    model: 'shared-general-a',
    task: 'code-review',
    estimatedTokens: 100,
    maxOutputTokens: 90,
    rates: RATES,
    ttlMs: 10 * HOUR,
    ...rest,
    limits: { free: { perDay: 2, unit: 'requests' }, rung: null, ...limits },
  };
}

const usage = (prompt: number, completion: number, cached = 0): Usage => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
  cached_tokens: cached,
});

function receiptFor(r: Reservation, outcome = 'answered') {
  return (s: { billing: string; chargedMicroUSD: number; usage: Usage; note?: string }) => ({
    id: `rcpt_${r.callId}`,
    callId: r.callId,
    principalId: r.principalId,
    createdAt: new Date(DAY1).toISOString(),
    outcome,
    billing: s.billing,
    chargedMicroUSD: s.chargedMicroUSD,
    usage: s.usage,
    ...(s.note ? { note: s.note } : {}),
  });
}

async function refusal(p: Promise<unknown>): Promise<GatewayError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

interface Harness {
  /** A meter, its store, and the job store of the same kind (whose job ends ride in settlements). */
  open(now: () => number): Promise<{ store: Store; meter: Meter; jobs: JobStore }>;
}

/** A queued job of `gw-1` for the reservation's call, as the job engine creates it. */
function jobOf(r: Reservation): JobRecord {
  const at = new Date(DAY1).toISOString();
  return {
    jobId: `job-${r.callId}`,
    principalId: r.principalId,
    model: 'shared-general-a',
    task: 'code-review',
    scopeId: null,
    origin: 'chat',
    status: 'queued',
    billing: r.billing,
    receiptId: `rcpt_${r.callId}`,
    callId: r.callId,
    owner: 'gw-1',
    leaseUntil: DAY1 + HOUR,
    reservation: r,
    createdAt: at,
    updatedAt: at,
  };
}

function meterContract(name: string, harness: Harness): void {
  describe(`meter contract: ${name}`, () => {
    let store: Store;
    let meter: Meter;
    let jobs: JobStore;
    let clock = DAY1;
    const ai = async (pid = PID) => (await meter.status(pid)).balances[0]!;
    const settleWith = (r: Reservation, u: Usage | null, chargeable = true) => meter.settle(r, { usage: u, chargeable }, receiptFor(r));

    beforeEach(async () => {
      clock = DAY1;
      ({ store, meter, jobs } = await harness.open(() => clock));
    });
    afterEach(async () => {
      await meter.close();
      await store.close();
    });

    describe('free allowance', () => {
      it('admits a call inside it as free, holding no money, and settles it at 0 while counting its tokens', async () => {
        const r = await meter.reserve(req());
        expect(r).to.include({ billing: 'free', reservedMicroUSD: 0, reservedTokens: 100, day: '2030-03-14', freeUnit: 'requests' });
        expect(await meter.usage(PID, '2030-03-14')).to.deep.include({ freeUsed: 0, freeHeld: 1 });
        const s = await settleWith(r, usage(40, 30));
        expect(s).to.deep.include({ billing: 'free', chargedMicroUSD: 0, pricedMicroUSD: 0, countedTokens: 70 });
        expect(await meter.usage(PID, '2030-03-14')).to.deep.include({ freeUsed: 1, freeHeld: 0 });
        expect(await ai()).to.deep.equal({ scope: 'ai', grantedMicroUSD: 0, spentMicroUSD: 0, reservedMicroUSD: 0, availableMicroUSD: 0 });
      });

      it('turns paid past the allowance, holding the worst case and charging the actual usage', async () => {
        await meter.grant({ operationId: 'op-1', principalId: PID, kind: 'credits', microUSD: 2000, source: 'test' });
        await settleWith(await meter.reserve(req()), usage(10, 10));
        await settleWith(await meter.reserve(req()), usage(10, 10));
        const third = await meter.reserve(req());
        expect(third).to.include({ billing: 'paid', reservedMicroUSD: WORST, freeUnit: null });
        expect(await ai()).to.include({ grantedMicroUSD: 2000, spentMicroUSD: 0, reservedMicroUSD: WORST, availableMicroUSD: 2000 - WORST });
        // 1000 prompt (400 cached) + 50 output, more than the hold's bound:
        // (600 x 900000 + 400 x 225000 + 50 x 4500000) / 1e6 = (540e6 + 90e6 + 225e6) / 1e6 = 855 > 414: all charged
        const above = await settleWith(third, usage(1000, 50, 400));
        expect(above).to.deep.include({ billing: 'paid', pricedMicroUSD: 855, chargedMicroUSD: 855, note: 'above-reservation' });
        const fourth = await meter.reserve(req());
        // (7 x 900000 + 3 x 225000 + 20 x 4500000) / 1e6 = (6.3e6 + 0.675e6 + 90e6) / 1e6 = 96.975 -> 97
        const within = await settleWith(fourth, usage(10, 20, 3));
        expect(within).to.deep.include({ chargedMicroUSD: 97, pricedMicroUSD: 97 });
        expect(within).not.to.have.property('note');
        expect(await ai()).to.deep.equal({
          scope: 'ai',
          grantedMicroUSD: 2000,
          spentMicroUSD: 855 + 97,
          reservedMicroUSD: 0,
          availableMicroUSD: 2000 - 855 - 97,
        });
        expect(await meter.usage(PID, '2030-03-14')).to.deep.include({ freeUsed: 2, freeHeld: 0 });
      });

      it('counts in tokens when the unit is tokens: a call is free only if its worst case fits', async () => {
        const limits = { free: { perDay: 250, unit: 'tokens' as const } };
        await meter.grant({ operationId: 'op-t', principalId: PID, kind: 'credits', microUSD: 10_000, source: 'test' });
        const a = await meter.reserve(req({ limits }));
        expect(a).to.include({ billing: 'free', freeUnit: 'tokens' });
        const b = await meter.reserve(req({ limits }));
        expect(b.billing).to.equal('free');
        expect(await meter.usage(PID, '2030-03-14')).to.deep.include({ freeHeld: 200 });
        expect((await meter.reserve(req({ limits }))).billing).to.equal('paid'); // 200 held + 100 > 250
        await settleWith(a, usage(20, 10));
        await settleWith(b, usage(20, 10));
        expect(await meter.usage(PID, '2030-03-14')).to.deep.include({ freeUsed: 60, freeHeld: 0 });
        expect((await meter.reserve(req({ limits }))).billing).to.equal('free'); // 60 + 100 <= 250
      });

      it('refuses 429 daily-allowance-exhausted past it when no credits were ever granted, changing nothing', async () => {
        await meter.reserve(req());
        await meter.reserve(req());
        const err = await refusal(meter.reserve(req()));
        expect(err.code).to.equal('daily-allowance-exhausted');
        expect(err.status).to.equal(429);
        expect(err.message).to.contain('free allowance of 2 requests per day is used (2 on 2030-03-14)');
        expect(await meter.usage(PID, '2030-03-14')).to.deep.include({ freeUsed: 0, freeHeld: 2 });
        expect(await ai()).to.include({ grantedMicroUSD: 0, reservedMicroUSD: 0 });
      });

      it('refuses 402 insufficient-credits when the credits do not cover the worst case, changing nothing', async () => {
        const limits = { free: { perDay: 0, unit: 'requests' as const } };
        await meter.grant({ operationId: 'op-2', principalId: PID, kind: 'credits', microUSD: WORST * 2 - 1, source: 'test' });
        await meter.reserve(req({ limits }));
        const err = await refusal(meter.reserve(req({ limits })));
        expect(err.code).to.equal('insufficient-credits');
        expect(err.status).to.equal(402);
        expect(err.message)
          .to.contain(`may cost ${WORST} micro-USD`)
          .and.contain(`${WORST - 1} micro-USD of credits are available`);
        expect(await ai()).to.deep.equal({
          scope: 'ai',
          grantedMicroUSD: 2 * WORST - 1,
          spentMicroUSD: 0,
          reservedMicroUSD: WORST,
          availableMicroUSD: WORST - 1,
        });
      });
    });

    describe('rung allowance and ceiling (red team)', () => {
      const rung = { id: 'card', tokensPerDay: 250, ceilingPerDay: 450 };
      const red = (over: Partial<Omit<ReserveRequest, 'limits'>> = {}) =>
        req({ ...over, model: 'red-whitehacker-a', limits: { free: { perDay: 1000, unit: 'requests' }, rung } });

      it('is free below tokens/day, paid only between tokens/day and the ceiling, and 429 past the ceiling', async () => {
        const a = await meter.reserve(red());
        const b = await meter.reserve(red());
        expect([a.billing, b.billing]).to.deep.equal(['free', 'free']); // 200 <= 250
        expect(a.rungCounted).to.equal(true);
        // 200 + 100 > 250: paid only, and there are no credits
        const noCredits = await refusal(meter.reserve(red()));
        expect(noCredits.code).to.equal('daily-allowance-exhausted');
        expect(noCredits.message).to.contain('allowance of 250 tokens per day at rung card is used (200 used or held on 2030-03-14, this call may use 100)');
        await meter.grant({ operationId: 'op-3', principalId: PID, kind: 'credits', microUSD: 5000, source: 'test' });
        const c = await meter.reserve(red());
        const d = await meter.reserve(red());
        expect([c.billing, d.billing]).to.deep.equal(['paid', 'paid']); // 300, 400 <= 450
        const past = await refusal(meter.reserve(red()));
        expect(past.code).to.equal('daily-ceiling-reached');
        expect(past.status).to.equal(429);
        expect(past.message).to.contain('daily ceiling of 450 tokens at rung card would be passed: 400 used or held on 2030-03-14');
        expect(await meter.usage(PID, '2030-03-14')).to.deep.include({ rungTokensUsed: 0, rungTokensHeld: 400 });
        // Settling counts the actual tokens and frees the rest of the hold: 4 x 30 = 120 used.
        for (const r of [a, b, c, d]) await settleWith(r, usage(20, 10));
        expect(await meter.usage(PID, '2030-03-14')).to.deep.include({ rungTokensUsed: 120, rungTokensHeld: 0 });
        expect((await meter.reserve(red())).billing).to.equal('free'); // 120 + 100 <= 250
      });

      it('does not count blue-team calls against the rung', async () => {
        await meter.reserve(req());
        expect(await meter.usage(PID, '2030-03-14')).to.deep.include({ rungTokensHeld: 0, freeHeld: 1 });
      });
    });

    describe('settlement', () => {
      it('applies once: settling twice changes nothing and answers the first settlement', async () => {
        await meter.grant({ operationId: 'op-4', principalId: PID, kind: 'credits', microUSD: 1000, source: 'test' });
        const r = await meter.reserve(req({ limits: { free: { perDay: 0, unit: 'requests' } } }));
        const first = await settleWith(r, usage(10, 10));
        // 10 x 0.9 + 10 x 4.5 = 54
        expect(first.chargedMicroUSD).to.equal(54);
        const again = await settleWith(r, usage(999, 999));
        expect(again).to.deep.include({ chargedMicroUSD: 54, billing: 'paid' });
        expect(again.usage).to.deep.equal(usage(10, 10));
        expect(await ai()).to.include({ spentMicroUSD: 54, reservedMicroUSD: 0, availableMicroUSD: 946 });
        expect(await store.listReceipts(PID, '2030-03-14')).to.have.length(1);
      });

      it('charges usage above the hold in full, once: the balance goes below zero and paid calls are 402 until credits are added', async () => {
        const limits = { free: { perDay: 0, unit: 'requests' as const } };
        await meter.grant({ operationId: 'op-neg', principalId: PID, kind: 'credits', microUSD: 1000, source: 'test' });
        const r = await meter.reserve(req({ limits }));
        // 5000 x 0.9 + 90 x 4.5 = 4,905 against a hold of 414
        const s = await settleWith(r, usage(5000, 90));
        expect(s).to.deep.include({ billing: 'paid', chargedMicroUSD: 4905, pricedMicroUSD: 4905, reservedMicroUSD: WORST, note: 'above-reservation' });
        expect(await store.getReceipt(`rcpt_${r.callId}`)).to.include({ chargedMicroUSD: 4905, note: 'above-reservation' });
        // A repeat (a retried settlement) changes nothing: idempotent on the call id.
        expect(await settleWith(r, usage(5000, 90))).to.deep.include({ chargedMicroUSD: 4905 });
        expect(await ai()).to.deep.equal({ scope: 'ai', grantedMicroUSD: 1000, spentMicroUSD: 4905, reservedMicroUSD: 0, availableMicroUSD: -3905 });
        const err = await refusal(meter.reserve(req({ limits })));
        expect(err.code).to.equal('insufficient-credits');
        expect(err.status).to.equal(402);
        expect(err.message).to.contain('3905 micro-USD below zero');
        await meter.grant({ operationId: 'op-top', principalId: PID, kind: 'credits', microUSD: 3905 + WORST, source: 'test' });
        expect(await meter.reserve(req({ limits }))).to.include({ billing: 'paid', reservedMicroUSD: WORST });
      });

      it('stores the receipt and its log leaf in the settlement, listed under the call day', async () => {
        const r = await meter.reserve(req());
        await settleWith(r, usage(5, 5));
        const stored = (await store.getReceipt(`rcpt_${r.callId}`))!;
        expect(stored).to.include({ id: `rcpt_${r.callId}`, day: '2030-03-14', billing: 'free', chargedMicroUSD: 0, logIndex: 0 });
        expect(stored).not.to.have.property('signature');
        expect(await logFor(store).nodes([{ level: 0, index: 0 }])).to.deep.equal([receiptLeafHash(stored)]);
        expect((await store.listReceipts(PID, '2030-03-14')).map((x) => x.id)).to.deep.equal([`rcpt_${r.callId}`]);
        expect(await store.listReceipts(OTHER, '2030-03-14')).to.deep.equal([]);
      });

      it('with nothing reported releases everything: no charge, no tokens, no free unit', async () => {
        const limits = { free: { perDay: 1, unit: 'requests' as const }, rung: { id: 'card', tokensPerDay: 1000, ceilingPerDay: 1000 } };
        const r = await meter.reserve(req({ limits }));
        expect(await settleWith(r, null)).to.deep.include({ chargedMicroUSD: 0, countedTokens: 0 });
        expect(await meter.usage(PID, '2030-03-14')).to.deep.include({ freeUsed: 0, freeHeld: 0, rungTokensUsed: 0, rungTokensHeld: 0 });
        expect((await meter.reserve(req({ limits }))).billing).to.equal('free'); // the free unit came back
      });

      it('records but does not charge usage that is not chargeable (echo mismatch)', async () => {
        await meter.grant({ operationId: 'op-5', principalId: PID, kind: 'credits', microUSD: 1000, source: 'test' });
        const r = await meter.reserve(req({ limits: { free: { perDay: 0, unit: 'requests' } } }));
        const s = await settleWith(r, usage(10, 10), false);
        expect(s).to.deep.include({ chargedMicroUSD: 0, countedTokens: 0 });
        expect(s.usage).to.deep.equal(usage(10, 10));
        expect(await ai()).to.include({ spentMicroUSD: 0, reservedMicroUSD: 0 });
      });

      it('release gives everything back, once, and leaves no receipt', async () => {
        await meter.grant({ operationId: 'op-6', principalId: PID, kind: 'credits', microUSD: 1000, source: 'test' });
        const r = await meter.reserve(req({ limits: { free: { perDay: 0, unit: 'requests' } } }));
        await meter.release(r);
        await meter.release(r);
        expect(await ai()).to.include({ reservedMicroUSD: 0, availableMicroUSD: 1000 });
        expect(await store.getReceipt(`rcpt_${r.callId}`)).to.equal(null);
      });

      it('answers a repeated reserve of one call id with the same hold, not a second one', async () => {
        await meter.grant({ operationId: 'op-7', principalId: PID, kind: 'credits', microUSD: 1000, source: 'test' });
        const r = req({ limits: { free: { perDay: 0, unit: 'requests' } } });
        const a = await meter.reserve(r);
        const b = await meter.reserve(r);
        expect(b).to.deep.equal(a);
        expect(await ai()).to.include({ reservedMicroUSD: WORST });
      });
    });

    describe("the job's end in the settlement's write", () => {
      /** Settles `r` closing its job; answers the settlement and whether the closing applied (undefined: not written). */
      const settleEnding = async (r: Reservation, u: Usage | null, owner = 'gw-1') => {
        let ended: boolean | undefined;
        const s = await meter.settle(r, { usage: u, chargeable: true }, receiptFor(r), (q) => ({
          jobId: `job-${r.callId}`,
          owner,
          patch: { status: 'succeeded', result: { completion: { chargedMicroUSD: q.chargedMicroUSD }, content: 'ok', toolCalls: null, finishReason: 'stop' } },
          retentionMs: HOUR,
          closed: (applied) => {
            ended = applied;
          },
        }));
        return { s, ended };
      };

      it('ends the job with the settlement that charges, and not again on a repeat', async () => {
        await meter.grant({ operationId: 'op-r1', principalId: PID, kind: 'credits', microUSD: 1000, source: 'test' });
        const r = await meter.reserve(req({ limits: { free: { perDay: 0, unit: 'requests' } } }));
        await jobs.createOrAttach(jobOf(r), HOUR);
        const first = await settleEnding(r, usage(10, 10));
        expect(first.s.chargedMicroUSD).to.equal(54);
        expect(first.ended).to.equal(true);
        expect(await jobs.get(`job-${r.callId}`))
          .to.include({ status: 'succeeded' })
          .and.nested.include({ 'result.completion.chargedMicroUSD': 54 });
        // A repeat (say, a retry after a lost reply) finds the settlement, and the job's end, already written.
        const again = await settleEnding(r, usage(999, 999));
        expect(again.s.chargedMicroUSD).to.equal(54);
        expect(again.ended).to.equal(undefined);
        expect(await ai()).to.include({ spentMicroUSD: 54, reservedMicroUSD: 0 });
      });

      it('ends the job with a late settlement too, as charged: nothing', async () => {
        await meter.grant({ operationId: 'op-r2', principalId: PID, kind: 'credits', microUSD: 1000, source: 'test' });
        const r = await meter.reserve(req({ limits: { free: { perDay: 0, unit: 'requests' } }, ttlMs: 1000 }));
        await jobs.createOrAttach(jobOf(r), HOUR);
        clock += 1000;
        expect(await meter.sweep()).to.equal(1);
        const late = await settleEnding(r, usage(10, 10));
        expect(late.s).to.deep.include({ chargedMicroUSD: 0, note: 'reservation-expired' });
        expect(late.ended).to.equal(true);
        expect(await jobs.get(`job-${r.callId}`))
          .to.include({ status: 'succeeded' })
          .and.nested.include({ 'result.completion.chargedMicroUSD': 0 });
      });

      it("settles even when the job is no longer the runner's to end, and says so", async () => {
        const r = await meter.reserve(req());
        await jobs.createOrAttach(jobOf(r), HOUR);
        const other = await settleEnding(r, usage(5, 5), 'gw-2');
        expect(other.ended).to.equal(false);
        expect(await jobs.get(`job-${r.callId}`)).to.include({ status: 'queued' });
        expect(await store.getReceipt(`rcpt_${r.callId}`)).to.include({ outcome: 'answered' });
      });
    });

    describe("the job's creation in the reservation's write", () => {
      const reserveCreating = async (r: ReserveRequest) => {
        let outcome: CreateOutcome | undefined;
        const draft = jobOf({ ...provisionalReservation(r), callId: r.callId });
        const reservation = await meter.reserve(r, { job: draft, retentionMs: HOUR, opened: (o) => (outcome = o) });
        return { reservation, outcome, jobId: draft.jobId };
      };

      it('creates the job with the hold, carrying the reservation as the meter made it', async () => {
        await meter.grant({ operationId: 'op-c1', principalId: PID, kind: 'credits', microUSD: 1000, source: 'test' });
        const paid = await reserveCreating(req({ limits: { free: { perDay: 0, unit: 'requests' } } }));
        expect(paid.outcome).to.deep.equal({ created: true });
        const stored = await jobs.get(paid.jobId);
        expect(stored).to.include({ status: 'queued', billing: 'paid', owner: 'gw-1' });
        expect(stored!.reservation).to.deep.equal(paid.reservation);
        const free = await reserveCreating(req());
        expect((await jobs.get(free.jobId))!.reservation).to.deep.equal(free.reservation);
        expect(free.reservation).to.include({ billing: 'free', reservedMicroUSD: 0, freeUnit: 'requests', day: '2030-03-14' });
      });

      it('creates nothing when the meter refuses', async () => {
        const r = req({ limits: { free: { perDay: 0, unit: 'requests' } } });
        const err = await refusal(reserveCreating(r));
        expect(err.code).to.equal('daily-allowance-exhausted');
        expect(await jobs.get(`job-${r.callId}`)).to.equal(null);
      });

      it('finds the live job of the same id instead, holding the call all the same', async () => {
        const twin = req();
        await jobs.createOrAttach(jobOf({ ...provisionalReservation(twin), callId: twin.callId }), HOUR);
        const attached = await reserveCreating(twin);
        expect(attached.outcome).to.have.property('created', false);
        expect(attached.outcome).to.have.nested.property('job.jobId', `job-${twin.callId}`);
        expect((await meter.usage(PID, '2030-03-14')).freeHeld).to.equal(1); // the caller releases it
      });
    });

    describe('expiry', () => {
      it('sweeps a reservation past its expiry, and a late settlement records the call without charging', async () => {
        await meter.grant({ operationId: 'op-8', principalId: PID, kind: 'credits', microUSD: 1000, source: 'test' });
        const limits = { free: { perDay: 0, unit: 'requests' as const } };
        const r = await meter.reserve(req({ limits, ttlMs: 1000 }));
        expect(r.expiresAt).to.equal(DAY1 + 1000);
        clock += 999;
        expect(await meter.sweep()).to.equal(0);
        clock += 1;
        expect(await meter.sweep()).to.equal(1);
        expect(await ai()).to.include({ reservedMicroUSD: 0, availableMicroUSD: 1000 });
        const late = await settleWith(r, usage(10, 10));
        expect(late).to.deep.include({ chargedMicroUSD: 0, note: 'reservation-expired' });
        expect(await store.getReceipt(`rcpt_${r.callId}`)).to.include({ chargedMicroUSD: 0, note: 'reservation-expired' });
        expect(await ai()).to.include({ spentMicroUSD: 0 });
      });

      it('reclaims expired reservations inside reserve and status, without a separate sweep', async () => {
        await meter.grant({ operationId: 'op-9', principalId: PID, kind: 'credits', microUSD: WORST, source: 'test' });
        const limits = { free: { perDay: 0, unit: 'requests' as const } };
        await meter.reserve(req({ limits, ttlMs: 1000 }));
        expect((await refusal(meter.reserve(req({ limits })))).code).to.equal('insufficient-credits');
        clock += 1000;
        expect(await ai()).to.include({ reservedMicroUSD: 0 });
        await meter.reserve(req({ limits, ttlMs: 1000 }));
        clock += 1000;
        expect((await meter.reserve(req({ limits }))).billing).to.equal('paid');
      });
    });

    describe('UTC days', () => {
      it('starts a fresh allowance at 00:00 UTC; a call admitted before midnight counts on its own day', async () => {
        await meter.reserve(req());
        const late = await meter.reserve(req());
        expect((await refusal(meter.reserve(req()))).code).to.equal('daily-allowance-exhausted');
        clock = Date.parse('2030-03-15T00:00:00.000Z');
        expect(meter.today()).to.equal('2030-03-15');
        const next = await meter.reserve(req());
        expect(next).to.include({ billing: 'free', day: '2030-03-15' });
        await settleWith(late, usage(1, 1));
        expect(await meter.usage(PID, '2030-03-14')).to.deep.include({ freeUsed: 1, freeHeld: 1 });
        expect(await meter.usage(PID, '2030-03-15')).to.deep.include({ freeUsed: 0, freeHeld: 1 });
        expect((await store.listReceipts(PID, '2030-03-14')).map((x) => x.id)).to.deep.equal([`rcpt_${late.callId}`]);
        expect(await store.listReceipts(PID, '2030-03-15')).to.deep.equal([]);
      });

      it('answers a reserve repeated after midnight with the first reservation, its day included, and counts the call on that day', async () => {
        const first = await meter.reserve(req());
        const repeat: ReserveRequest = { ...req(), callId: first.callId };
        clock = Date.parse('2030-03-15T00:00:00.000Z');
        const again = await meter.reserve(repeat);
        expect(again).to.deep.equal(first);
        await settleWith(again, usage(1, 1));
        expect(await meter.usage(PID, '2030-03-14')).to.deep.include({ freeUsed: 1, freeHeld: 0 });
        expect(await meter.usage(PID, '2030-03-15')).to.deep.include({ freeUsed: 0, freeHeld: 0 });
        expect((await store.listReceipts(PID, '2030-03-14')).map((x) => x.id)).to.deep.equal([`rcpt_${first.callId}`]);
      });
    });

    describe('grants', () => {
      it('applies a grant once per operation id and answers the first application after', async () => {
        const g = { operationId: 'evt_1', principalId: PID, kind: 'credits' as const, microUSD: 25_000_000, source: 'test' };
        const first = await meter.grant(g);
        const second = await meter.grant(g);
        expect(first.applied).to.equal(true);
        expect(second.applied).to.equal(false);
        expect(second.grant).to.deep.equal(first.grant);
        expect(await ai()).to.include({ grantedMicroUSD: 25_000_000, availableMicroUSD: 25_000_000 });
      });

      it('sets the plan with a plan grant and adds its credits', async () => {
        await meter.grant({ operationId: 'plan-1', principalId: PID, kind: 'plan', plan: 'pro', microUSD: 12_000_000, source: 'test' });
        const s = await meter.status(PID);
        expect(s).to.deep.equal({
          status: 'connected',
          plan: 'pro',
          balances: [{ scope: 'ai', grantedMicroUSD: 12_000_000, spentMicroUSD: 0, reservedMicroUSD: 0, availableMicroUSD: 12_000_000 }],
        });
        expect((await meter.status(OTHER)).plan).to.equal(null);
      });
    });

    describe('clawbacks', () => {
      it('takes back a claim up to its total, once per operation id, and never below what was spent', async () => {
        await meter.grant({ operationId: 'stripe:invoice:in_1', principalId: PID, kind: 'credits', microUSD: 1000, source: 'test' });
        expect((await meter.grantOf('stripe:invoice:in_1'))?.microUSD).to.equal(1000);
        expect(await meter.grantOf('stripe:invoice:nope')).to.equal(null);
        // Two free calls, then a paid one that spends 97.
        await settleWith(await meter.reserve(req()), usage(10, 10));
        await settleWith(await meter.reserve(req()), usage(10, 10));
        await settleWith(await meter.reserve(req()), usage(10, 20, 3));
        const claw = (op: string, target: number) =>
          meter.clawback({ operationId: op, principalId: PID, claimKey: 'in_1:refund', targetMicroUSD: target, source: 'test' });
        // A partial refund of 40 %: 400 taken.
        expect(await claw('evt_a', 400)).to.deep.equal({ applied: true, takenMicroUSD: 400, waivedMicroUSD: 0 });
        expect(await claw('evt_a', 400)).to.deep.equal({ applied: false, takenMicroUSD: 400, waivedMicroUSD: 0 });
        expect(await ai()).to.include({ grantedMicroUSD: 600, spentMicroUSD: 97, availableMicroUSD: 503 });
        // The refund grows to all of it: only the rest of the claim, and what was spent stays.
        expect(await claw('evt_b', 1000)).to.deep.equal({ applied: true, takenMicroUSD: 503, waivedMicroUSD: 97 });
        expect(await ai()).to.include({ grantedMicroUSD: 97, spentMicroUSD: 97, availableMicroUSD: 0 });
        // A later event about the same, settled claim takes nothing more.
        expect(await claw('evt_c', 1000)).to.deep.equal({ applied: true, takenMicroUSD: 0, waivedMicroUSD: 0 });
        expect((await ai()).grantedMicroUSD).to.equal(97);
      });
    });

    describe('records', () => {
      it('stores the receipt (and its log leaf) of a call that holds nothing, once', async () => {
        const written = await meter.record({ id: 'rcpt_x', principalId: PID, createdAt: new Date(DAY1).toISOString(), outcome: 'refused' });
        expect(written['day']).to.equal('2030-03-14');
        await meter.record({ id: 'rcpt_x', principalId: PID, createdAt: new Date(DAY1).toISOString(), outcome: 'changed' });
        const stored = await store.getReceipt('rcpt_x');
        expect(stored).to.include({ outcome: 'refused', logIndex: 0 });
        expect(await logFor(store).pending(10)).to.include({ size: 1 });
      });
    });

    describe('concurrency', () => {
      it('admits exactly as many of 300 parallel paid calls as the credits cover, never going negative', async () => {
        const limits = { free: { perDay: 0, unit: 'requests' as const } };
        await meter.grant({ operationId: 'op-c', principalId: PID, kind: 'credits', microUSD: 37 * WORST, source: 'test' });
        const results = await Promise.allSettled(Array.from({ length: 300 }, () => meter.reserve(req({ limits }))));
        const admitted = results.filter((r): r is PromiseFulfilledResult<Reservation> => r.status === 'fulfilled').map((r) => r.value);
        expect(admitted).to.have.length(37);
        for (const r of results) if (r.status === 'rejected') expect((r.reason as GatewayError).code).to.equal('insufficient-credits');
        expect(await ai()).to.include({ reservedMicroUSD: 37 * WORST, availableMicroUSD: 0 });
        // Settled twice each, in parallel: charged once.
        await Promise.all(admitted.flatMap((r) => [settleWith(r, usage(10, 90)), settleWith(r, usage(10, 90))]));
        expect(await ai()).to.deep.equal({ scope: 'ai', grantedMicroUSD: 37 * WORST, spentMicroUSD: 37 * WORST, reservedMicroUSD: 0, availableMicroUSD: 0 });
        const receipts = await store.listReceipts(PID, '2030-03-14');
        expect(receipts).to.have.length(37);
        expect(receipts.reduce((n, r) => n + (r['chargedMicroUSD'] as number), 0)).to.equal(37 * WORST);
        // One leaf per receipt, whatever the repeats: indices 0..36, each once.
        expect(receipts.map((r) => r['logIndex'] as number).sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 37 }, (_, i) => i));
        expect(await logFor(store).pending(100)).to.include({ size: 37 });
      });

      it('releases on NOTHING_REPORTED settlements in parallel without going below zero', async () => {
        const limits = { free: { perDay: 0, unit: 'requests' as const } };
        await meter.grant({ operationId: 'op-d', principalId: PID, kind: 'credits', microUSD: 10 * WORST, source: 'test' });
        const rs = await Promise.all(Array.from({ length: 10 }, () => meter.reserve(req({ limits }))));
        await Promise.all(rs.flatMap((r) => [meter.settle(r, NOTHING_REPORTED, receiptFor(r, 'failed')), meter.release(r)]));
        expect(await ai()).to.deep.equal({ scope: 'ai', grantedMicroUSD: 10 * WORST, spentMicroUSD: 0, reservedMicroUSD: 0, availableMicroUSD: 10 * WORST });
      });
    });
  });
}

meterContract('memory', {
  async open(now) {
    const store = new MemoryStore();
    const jobs = new MemoryJobStore();
    return { store, meter: new MemoryMeter(store, { now, jobs }), jobs };
  },
});

onRedis('meter on redis', (connect) =>
  meterContract('redis', {
    async open(now) {
      const store = await connect();
      const jobs = new RedisJobStore(store);
      return { store, meter: new RedisMeter(store, { now, jobs }), jobs };
    },
  }),
);
