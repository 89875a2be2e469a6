/**
 * One classification of store failures: the single exit's answer (`asGatewayError`) and the ceremony's
 * "was this an outage" (`isStoreOutage`, which decides whether a request's challenges are given back) read
 * the same mapping, so a failure answered 503 `store-unavailable` is exactly one whose challenges come back.
 */
import { expect } from 'chai';
import { asGatewayError } from '../../src/app/single-exit.js';
import { GatewayError } from '../../src/errors.js';
import { isStoreOutage, StoreConflict, StoreRefused, StoreUnavailable, storeGatewayError } from '../../src/store/errors.js';

describe('store errors: one mapping for the answer and the outage test', () => {
  const cases: Array<[string, unknown, boolean]> = [
    ['the store could not be asked', new StoreUnavailable('redis get failed: The client is offline'), true],
    ['an outage a stage already answered', new GatewayError('store-unavailable'), true],
    ['a refusal of the store (a startup failure)', new StoreRefused('HELLO 3 refused'), false],
    ['a create that met an existing record', new StoreConflict('exists'), false],
    ['a refusal of the request', new GatewayError('invalid-request'), false],
    ['a bug', new TypeError('x is undefined'), false],
    ['a thrown non-error', 'boom', false],
  ];

  for (const [what, err, outage] of cases) {
    it(`${what}: ${outage ? 'an outage, answered 503 store-unavailable' : 'not an outage'}`, () => {
      expect(isStoreOutage(err)).to.equal(outage);
      expect(asGatewayError(err).code === 'store-unavailable').to.equal(outage);
    });
  }

  it('maps the store outage to the error table entry, with its status and no detail of the cause', () => {
    const e = storeGatewayError(new StoreUnavailable('redis get: no reply within 2000 ms'));
    expect(e).to.be.instanceOf(GatewayError);
    expect({ code: e!.code, status: e!.status, message: e!.message }).to.deep.equal({
      code: 'store-unavailable',
      status: 503,
      message: 'the store cannot be reached; nothing was admitted',
    });
  });
});
