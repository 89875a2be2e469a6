/**
 * A receipt's leaf: the RFC 8785 form of the receipt without the members the log adds (logIndex,
 * inclusionProof, checkpoint, pending), so it is fixed before the receipt is sequenced and recomputable from
 * what the API serves; and what the store writes always hashes to the leaf it sequences, even for a string
 * RFC 8785 refuses.
 */
import { expect } from 'chai';
import { canonicalReceipt, receiptLeafHash, storableReceipt } from '../../src/receipts/canonical.js';
import { leafHash } from '../../src/receipts/merkle.js';

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
});
