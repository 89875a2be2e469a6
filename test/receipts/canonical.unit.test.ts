/**
 * A receipt's leaf: the RFC 8785 form of the receipt without the members the log adds (logIndex,
 * inclusionProof, checkpoint, pending), so it is fixed before the receipt is sequenced and recomputable from
 * what the API serves; and what the store writes always hashes to the leaf it sequences, even for a string
 * RFC 8785 refuses.
 */
import { expect } from 'chai';
import { canonicalReceipt, receiptLeafHash, storableReceipt } from '../../src/receipts/canonical.js';
import { leafHash } from '../../src/receipts/merkle.js';
import canonicalize from 'canonicalize';
import { buildReceipt } from '../../src/receipts/receipt.js';
import type { Call } from '../../src/stages/call.js';
import type { Settlement } from '../../src/metering/meter.js';
import type { Versions } from '../../src/config/compile.js';

describe('receipt leaf (RFC 8785 canonical receipt)', () => {
  it('sorts keys, drops whitespace, and leaves the proof members out', () => {
    const r = { b: 1, a: { d: 'x', c: [2, 1] }, logIndex: 4, inclusionProof: ['x'], checkpoint: 'cp', pending: true };
    expect(canonicalReceipt(r).toString()).to.equal('{"a":{"c":[2,1],"d":"x"},"b":1}');
    expect(receiptLeafHash(r)).to.deep.equal(leafHash(Buffer.from('{"a":{"c":[2,1],"d":"x"},"b":1}')));
    expect(receiptLeafHash({ ...r, b: 2 })).not.to.deep.equal(receiptLeafHash(r));
  });

  it('stores what it hashes: undefined members dropped, a lone surrogate replaced rather than failing', () => {
    const plain = storableReceipt({ id: 'r', gone: undefined, n: 1 });
    expect(plain.json).to.equal('{"id":"r","n":1}');
    expect(plain.leaf).to.deep.equal(receiptLeafHash({ id: 'r', n: 1 }));
    const odd = storableReceipt({ id: 'r', echoedModel: 'model-\ud800-x' });
    expect(JSON.parse(odd.json).echoedModel).to.equal('model-\ufffd-x');
    expect(odd.leaf).to.deep.equal(receiptLeafHash(JSON.parse(odd.json)));
  });

  it('stores the canonical form itself, so the stored bytes are the bytes the leaf hashes', () => {
    const stored = storableReceipt({ z: 1, id: 'r', a: { y: [3, 'b'], b: null } });
    expect(stored.json).to.equal('{"a":{"b":null,"y":[3,"b"]},"id":"r","z":1}');
    expect(stored.leaf).to.deep.equal(leafHash(Buffer.from(stored.json, 'utf8')));
  });
});

describe('receipt leaf: the fast canonical form is byte for byte canonicalize', () => {
  /** Receipts as buildReceipt makes them: an answered, a refused and a failed call, with unicode and numbers. */
  const versions = { policy: 'p-7', guardrails: 'g-3', catalog: 'c-12', rungs: 'r-2', billing: 'b-1' } as unknown as Versions;
  const call = (over: Partial<Call>): Call =>
    ({
      id: 'call_01HZY',
      startedAt: new Date('2026-11-23T21:00:00.123Z'),
      runtime: { versions } as Call['runtime'],
      scopeId: null,
      abort: new AbortController(),
      identity: { principal: { id: 'prn_ÅØ_東京_🙂' } } as Call['identity'],
      ...over,
    }) as Call;
  const model = { id: 'gpt-ü 模型', route: 'eu/west', upstreamModel: 'up-😀-model' } as unknown as Call['model'];
  const decision = {
    allow: true,
    team: 'Équipe "rouge"\\north',
    scope: 'scp_\u2028line\u0007bell',
    band: 'b2',
    denials: [{ code: 'z-last' }, { code: 'a-first' }],
    guardrails: { block: [], redact: ['pii.email', 'secret.aws'], flag: ['intent.ßpecial'] },
  } as unknown as Call['decision'];
  const reservation = {
    callId: 'call_01HZY',
    principalId: 'prn_x',
    day: '2026-11-23',
    billing: 'paid',
    reservedMicroUSD: 9007199254740991,
    reservedTokens: 123456,
    rates: { inputPerMTok: 2_500_000, cachedInputPerMTok: 0, outputPerMTok: 10_000_000 },
  } as unknown as Call['reservation'];
  const settlement = {
    usage: { inputTokens: 1e21, cachedInputTokens: -0, outputTokens: 0.5 },
    billing: 'paid',
    chargedMicroUSD: 1234567,
    pricedMicroUSD: 1234567,
    countedTokens: 42,
    note: 'reservation-expired',
  } as unknown as Settlement;
  const receipts = [
    buildReceipt(call({ model, decision, reservation, answer: { model: 'échoed-🙂' } as Call['answer'] }), 'answered', undefined, settlement),
    buildReceipt(call({ model, decision: { ...decision!, allow: false } }), 'refused', { code: 'guardrail-blocked' }),
    buildReceipt(call({ valid: { request: { model: '\u0000ctl\u001f\t\n"q"' } } as Call['valid'] }), 'failed', { code: 'internal-error' }),
  ].map((r) => ({ ...r, day: '2026-11-23' }));

  for (const [i, receipt] of receipts.entries()) {
    it(`receipt ${i + 1}: the stored leaf hashes canonicalize's bytes`, () => {
      const { json, leaf } = storableReceipt(receipt);
      // Serialised once: the stored bytes are the canonical bytes the leaf hashes.
      expect(json).to.equal(canonicalize(receipt));
      expect(leaf).to.deep.equal(leafHash(Buffer.from(json, 'utf8')));
      expect(leaf).to.deep.equal(leafHash(Buffer.from(canonicalize(receipt)!, 'utf8')));
      expect(leaf).to.deep.equal(receiptLeafHash(JSON.parse(json) as Record<string, unknown>));
    });
  }

  it('NaN, Infinity and a literal backslash-u in text still give the careful path its result', () => {
    const text = storableReceipt({ id: 'r', note: 'C:\\ud800\\path', n: 3 });
    expect(text.leaf).to.deep.equal(leafHash(Buffer.from(canonicalize({ id: 'r', note: 'C:\\ud800\\path', n: 3 })!, 'utf8')));
    const nan = storableReceipt({ id: 'r', n: Number.NaN, m: Number.POSITIVE_INFINITY });
    expect(nan.json).to.equal('{"id":"r","m":null,"n":null}');
    expect(nan.leaf).to.deep.equal(leafHash(Buffer.from('{"id":"r","m":null,"n":null}')));
  });
});
