/**
 * The gateway's long-lived parts are one list (src/app/services.ts): started in order, stopped in reverse,
 * a failed start stopping what had started, a part that fails to stop not keeping the rest running.
 */
import { expect } from 'chai';
import { Services } from '../../src/app/services.js';

describe('services: start in order, stop in reverse', () => {
  const part = (name: string, log: string[], fail: { start?: boolean; stop?: boolean } = {}) => ({
    name,
    start: async () => {
      if (fail.start) throw new Error(`${name} cannot start`);
      log.push(`start ${name}`);
      return name;
    },
    stop: async (value: string) => {
      if (fail.stop) throw new Error(`${value} cannot stop`);
      log.push(`stop ${value}`);
    },
  });

  it('stops the parts in reverse of their start, once however often it is asked', async () => {
    const log: string[] = [];
    const services = new Services();
    for (const name of ['store', 'meter', 'listeners', 'engine']) expect(await services.start(part(name, log))).to.equal(name);
    await Promise.all([services.stop(), services.stop()]);
    await services.stop();
    expect(log).to.deep.equal(['start store', 'start meter', 'start listeners', 'start engine', 'stop engine', 'stop listeners', 'stop meter', 'stop store']);
  });

  it('a part that cannot start stops, in reverse, the parts started before it, and nothing starts after', async () => {
    const log: string[] = [];
    const services = new Services();
    await services.start(part('store', log));
    await services.start(part('meter', log));
    let thrown: unknown;
    await services.start(part('listeners', log, { start: true })).catch((err: unknown) => (thrown = err));
    expect((thrown as Error).message).to.equal('listeners cannot start');
    expect(log).to.deep.equal(['start store', 'start meter', 'stop meter', 'stop store']);
    thrown = null;
    await services.start(part('engine', log)).catch((err: unknown) => (thrown = err));
    expect(thrown).to.be.instanceOf(Error);
    expect(log).to.not.include('start engine');
  });

  it('a part that fails to stop does not keep the others running, and the stop says which failed', async () => {
    const log: string[] = [];
    const services = new Services();
    await services.start(part('store', log));
    await services.start(part('receipts', log, { stop: true }));
    await services.start(part('engine', log));
    let thrown: unknown;
    await services.stop().catch((err: unknown) => (thrown = err));
    expect(log).to.deep.equal(['start store', 'start receipts', 'start engine', 'stop engine', 'stop store']);
    expect((thrown as Error).message).to.equal('receipts failed to stop');
  });
});
