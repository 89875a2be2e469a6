/**
 * The identity cache's copy of what its memo holds (src/store/identity-cache.ts `copyRecord`): every call
 * gets its own deep copy of the token and principal records, as structuredClone gave it, so a caller that
 * changes its copy never changes what the next call is given.
 */
import { expect } from 'chai';
import { copyRecord } from '../../src/store/identity-cache.js';

const identity = () => ({
  token: {
    id: 'tok_1',
    principalId: 'did:web:x:tenant:a',
    label: 'laptop',
    format: 'v2',
    hash: 'c'.repeat(64),
    createdAt: '2030-01-01T00:00:00.000Z',
    revokedAt: null,
  },
  principal: {
    id: 'did:web:x:tenant:a',
    username: 'a',
    createdAt: '2030-01-01T00:00:00.000Z',
    rung: { level: 'L2', grantedAt: '2030-01-01T00:00:00.000Z', expiresAt: undefined },
    aup: null,
    scopes: [{ id: 's1', tasks: ['recon', 'triage'], status: 'approved' }],
  },
  legacyRevoked: false,
});

describe('copyRecord (the identity memo copy)', () => {
  it('gives what structuredClone gives for a stored record, undefined fields and a "__proto__" field included', () => {
    const parsed = JSON.parse('{"a":{"__proto__":{"polluted":true},"b":[1,null,"x",{"c":false}]}}') as Record<string, unknown>;
    for (const v of [identity(), parsed, [1, [2, [3]], { d: undefined }], 'text', 7, null, true]) {
      const copy = copyRecord(v);
      expect(copy).to.deep.equal(structuredClone(v));
    }
    const copy = copyRecord(parsed) as { a: Record<string, unknown> };
    expect(Object.getPrototypeOf(copy.a)).to.equal(Object.prototype);
    expect(Object.keys(copy.a)).to.deep.equal(['__proto__', 'b']);
    expect((copy.a as { polluted?: boolean }).polluted).to.equal(undefined);
  });

  it('shares nothing with the original: changing the copy leaves the memo as it was', () => {
    const held = identity();
    const copy = copyRecord(held);
    copy.principal.scopes[0]!.tasks.push('exploit');
    copy.principal.rung.level = 'L9';
    copy.token.revokedAt = '2030-02-01T00:00:00.000Z' as unknown as null;
    expect(held).to.deep.equal(identity());
  });
});
