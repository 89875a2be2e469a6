/**
 * One contract for both wallet-account stores (memory, and Redis on a real redis-server): the first link of
 * an account wins and every later one is told the winner; racing first links agree on one principal; a
 * principal's accounts are listed, and only those it won.
 */
import { expect } from 'chai';
import { eoaKey, smartAccountKey, type WalletAccountStore } from '../../src/wallet/accounts.js';
import { MemoryWalletAccounts } from '../../src/wallet/memory-accounts.js';
import { RedisWalletAccounts } from '../../src/wallet/redis-accounts.js';
import { onRedis } from '../helpers/redis-contract.js';

const A = '0x52908400098527886E0F7030069857D2E4169EE7';

function contract(name: string, make: () => Promise<{ accounts: WalletAccountStore; close(): Promise<void> }>) {
  describe(`wallet account store contract: ${name}`, () => {
    let s: WalletAccountStore;
    let close: () => Promise<void>;
    beforeEach(async () => {
      ({ accounts: s, close } = await make());
    });
    afterEach(() => close());

    it('an unseen account has no owner; its first link sets one', async () => {
      expect(await s.owner(eoaKey(A))).to.equal(null);
      expect(await s.link(eoaKey(A), 'did:web:x:tenant:a')).to.equal('did:web:x:tenant:a');
      expect(await s.owner(eoaKey(A))).to.equal('did:web:x:tenant:a');
    });

    it('a later link does not move the account, and answers its owner', async () => {
      await s.link(eoaKey(A), 'did:web:x:tenant:a');
      expect(await s.link(eoaKey(A), 'did:web:x:tenant:b')).to.equal('did:web:x:tenant:a');
      expect(await s.owner(eoaKey(A))).to.equal('did:web:x:tenant:a');
    });

    it('an address is one EOA in any letter case, and a smart account per chain', async () => {
      await s.link(eoaKey(A), 'did:web:x:tenant:a');
      expect(await s.owner(eoaKey(A.toLowerCase() as `0x${string}`))).to.equal('did:web:x:tenant:a');
      expect(await s.owner(smartAccountKey(8453, A))).to.equal(null);
      await s.link(smartAccountKey(8453, A), 'did:web:x:tenant:s');
      expect(await s.owner(smartAccountKey(1, A))).to.equal(null);
    });

    it('unlinks an account only for its owner; it is then unseen and may be linked again', async () => {
      await s.link(eoaKey(A), 'did:web:x:tenant:a');
      expect(await s.unlink(eoaKey(A), 'did:web:x:tenant:b')).to.equal(false);
      expect(await s.owner(eoaKey(A))).to.equal('did:web:x:tenant:a');
      expect(await s.unlink(eoaKey(A), 'did:web:x:tenant:a')).to.equal(true);
      expect(await s.unlink(eoaKey(A), 'did:web:x:tenant:a')).to.equal(false);
      expect(await s.owner(eoaKey(A))).to.equal(null);
      expect(await s.accountsOf('did:web:x:tenant:a')).to.deep.equal([]);
      expect(await s.link(eoaKey(A), 'did:web:x:tenant:b')).to.equal('did:web:x:tenant:b');
      expect(await s.accountsOf('did:web:x:tenant:b')).to.deep.equal([eoaKey(A)]);
    });

    it("lists a principal's accounts, sorted, and never an account it lost", async () => {
      const B = '0x0000000000000000000000000000000000000b0b';
      expect(await s.accountsOf('did:web:x:tenant:a')).to.deep.equal([]);
      await s.link(smartAccountKey(8453, A), 'did:web:x:tenant:a');
      await s.link(eoaKey(B), 'did:web:x:tenant:a');
      await s.link(eoaKey(B), 'did:web:x:tenant:b');
      expect(await s.accountsOf('did:web:x:tenant:a')).to.deep.equal([eoaKey(B), smartAccountKey(8453, A)]);
      expect(await s.accountsOf('did:web:x:tenant:b')).to.deep.equal([]);
    });

    it('racing first links agree on one principal', async () => {
      const got = await Promise.all(Array.from({ length: 10 }, (_, i) => s.link(eoaKey(A), `did:web:x:tenant:p${i}`)));
      expect(new Set(got).size).to.equal(1);
      expect(await s.owner(eoaKey(A))).to.equal(got[0]);
      for (let i = 0; i < 10; i++) expect(await s.accountsOf(`did:web:x:tenant:p${i}`)).to.deep.equal(got[0] === `did:web:x:tenant:p${i}` ? [eoaKey(A)] : []);
    });
  });
}

contract('memory', async () => ({ accounts: new MemoryWalletAccounts(), close: async () => {} }));

onRedis('wallet account store on redis-server', (connect) => {
  contract('redis', async () => {
    const store = await connect();
    return { accounts: new RedisWalletAccounts(store), close: () => store.close() };
  });
});
