/**
 * One contract for both identity-link stores (memory, and Redis on a real redis-server): an identity names
 * the first principal that links it and is never moved to another; racing links agree on one; a principal's
 * newer link replaces its own older one, which is then free.
 */
import { expect } from 'chai';
import type { IdentityLink, IdentityLinkStore } from '../../src/identity-links/store.js';
import { MemoryIdentityLinks } from '../../src/identity-links/memory-store.js';
import { RedisIdentityLinks } from '../../src/identity-links/redis-store.js';
import { onRedis } from '../helpers/redis-contract.js';

const ISS = 'https://idp.example';
const link = (subject: string, over: Partial<IdentityLink> = {}): IdentityLink => ({
  issuer: ISS,
  subject,
  name: `user ${subject}`,
  email: null,
  linkedAt: '2030-01-01T00:00:00.000Z',
  ...over,
});

function contract(name: string, make: () => Promise<{ links: IdentityLinkStore; close(): Promise<void> }>) {
  describe(`identity link store contract: ${name}`, () => {
    let s: IdentityLinkStore;
    let close: () => Promise<void>;
    beforeEach(async () => {
      ({ links: s, close } = await make());
    });
    afterEach(() => close());

    it('links an identity to the first principal, and never moves it', async () => {
      expect(await s.linkOf('did:web:x:tenant:a')).to.equal(null);
      expect(await s.link('did:web:x:tenant:a', link('1'))).to.equal('did:web:x:tenant:a');
      expect(await s.link('did:web:x:tenant:b', link('1'))).to.equal('did:web:x:tenant:a');
      expect(await s.linkOf('did:web:x:tenant:a')).to.deep.equal(link('1'));
      expect(await s.linkOf('did:web:x:tenant:b')).to.equal(null);
      // The same subject at another issuer is another identity.
      expect(await s.link('did:web:x:tenant:b', link('1', { issuer: 'https://other.example' }))).to.equal('did:web:x:tenant:b');
    });

    it('a newer link of the principal replaces its older one, which another principal may then link', async () => {
      await s.link('did:web:x:tenant:a', link('1'));
      expect(await s.link('did:web:x:tenant:a', link('2', { name: 'two' }))).to.equal('did:web:x:tenant:a');
      expect((await s.linkOf('did:web:x:tenant:a'))?.name).to.equal('two');
      expect(await s.link('did:web:x:tenant:b', link('1'))).to.equal('did:web:x:tenant:b');
    });

    it('racing links of one identity agree on one principal', async () => {
      const got = await Promise.all(Array.from({ length: 10 }, (_, i) => s.link(`did:web:x:tenant:p${i}`, link('race'))));
      expect(new Set(got).size).to.equal(1);
    });
  });
}

contract('memory', async () => ({ links: new MemoryIdentityLinks(), close: async () => {} }));

onRedis('identity link store on redis-server', (connect) => {
  contract('redis', async () => {
    const store = await connect();
    return { links: new RedisIdentityLinks(store), close: () => store.close() };
  });
});
