/**
 * The call as a domain, without HTTP or a store: where its state says it stands, what the meter is asked
 * to settle when it ends unanswered, which guardrail refusal wins, and the receipt a sweep writes for a job
 * whose runner died. The routes' suites (test/app) drive the same code through the pipeline.
 */
import { expect } from 'chai';
import { callJob, handedOver, openCall, type Call } from '../../src/call/call.js';
import { unansweredSettlement, answeredSettlement } from '../../src/call/meter-requests.js';
import { guardrailRefusal } from '../../src/call/refusal.js';
import { interruptedReceipt, newReceiptId } from '../../src/call/receipt.js';
import type { JobRecord } from '../../src/jobs/job.js';
import type { Settlement } from '../../src/metering/meter.js';
import type { UpstreamAnswer } from '../../src/openai/answer.js';

const runtime = {} as Call['runtime'];
const usage = { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8, cached_tokens: 0 };
const job = {
  jobId: 'job_1',
  callId: 'c1',
  receiptId: 'rcpt_c1',
  principalId: 'prn_1',
  model: 'm',
  task: 'code-review',
  createdAt: '2026-11-27T10:00:00.000Z',
} as JobRecord;

describe('the call', () => {
  it('opens admitting, bound to no job, and is handed over once a job owns it', () => {
    const call = openCall('c1', runtime);
    expect(call.state).to.deep.equal({ at: 'admitting' });
    expect(callJob(call)).to.equal(undefined);
    expect(handedOver(call)).to.equal(false);
    call.state = { at: 'reserved', job, rival: null };
    expect(handedOver(call), 'a reservation alone is still the HTTP side to end').to.equal(false);
    call.state = { at: 'handed-over', job };
    expect(handedOver(call)).to.equal(true);
    expect(callJob(call)).to.equal(job);
    call.state = { at: 'attached', job };
    expect(handedOver(call), "an identical request's job ends it").to.equal(true);
  });

  it('settles an unanswered call at the worst case reserved when the upstream usage was malformed, and an echo mismatch uncharged', () => {
    const call = { ...openCall('c1', runtime), valid: { inputTokens: 100, maxTokens: 50 } } as Call;
    expect(unansweredSettlement(call, 'upstream-usage-malformed')).to.deep.equal({
      usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150, cached_tokens: 0 },
      chargeable: true,
    });
    expect(unansweredSettlement(call, 'upstream-timeout')).to.deep.equal({ usage: null, chargeable: true });
    call.answer = { usage } as UpstreamAnswer;
    expect(unansweredSettlement(call, 'upstream-model-mismatch')).to.deep.equal({ usage, chargeable: false });
    expect(answeredSettlement(call.answer)).to.deep.equal({ usage, chargeable: true });
  });

  it('refuses for a block before a fail-closed classifier that could not answer, and not at all without either', () => {
    const call = (block: string[], failClosed: boolean) =>
      ({
        decision: { guardrails: { block, redact: [], flag: [] } },
        scan: { failures: [{ classifier: 'moderation', reason: 'timeout', failClosed }] },
      }) as unknown as Call;
    expect(guardrailRefusal(call(['r1'], true))?.code).to.equal('guardrail-blocked');
    expect(guardrailRefusal(call([], true))?.code).to.equal('guardrail-classifier-unavailable');
    expect(guardrailRefusal(call([], false))).to.equal(null);
  });

  it("writes an interrupted job's receipt from its record: failed job-interrupted, what the settlement charged", () => {
    const s = { billing: 'paid', chargedMicroUSD: 0, usage, pricedMicroUSD: 0, reservedMicroUSD: 900, countedTokens: 0 } as Settlement;
    const receipt = interruptedReceipt(job, s, new Date('2026-11-27T10:05:00.000Z'));
    expect(receipt).to.deep.include({
      id: newReceiptId('c1'),
      callId: 'c1',
      principalId: 'prn_1',
      createdAt: job.createdAt,
      finishedAt: '2026-11-27T10:05:00.000Z',
      outcome: 'failed',
      error: { code: 'job-interrupted' },
      chargedMicroUSD: 0,
      reservedMicroUSD: 900,
    });
  });
});
