/**
 * The deadline every store command runs under (src/store/connection.ts `withDeadline`): it settles as the
 * command does, or fails with DeadlineExceeded when the command does not answer in time. Deadlines of one
 * length share one timer: a command that answers leaves no deadline behind, a hung one among answered ones
 * is failed (once), and when nothing waits any more no timer is left to keep the process up.
 */
import { expect } from 'chai';
import { DeadlineExceeded, withDeadline } from '../../src/store/connection.js';

const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
/** The timers before a test's own: read after a turn, once the test runner has set its timeout for the test. */
const timersBefore = async () => {
  await new Promise((r) => setImmediate(r));
  return timers();
};
const never = () => new Promise<never>(() => undefined);
const outcome = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ value }),
    (err: unknown) => ({ err }),
  );

describe('store deadlines', () => {
  it('settles as the command does: its value, or its own error', async () => {
    expect(await withDeadline(Promise.resolve(7), 1_000)).to.equal(7);
    const err = new Error('refused');
    const r = await outcome(withDeadline(Promise.reject(err), 1_000));
    expect(r).to.deep.equal({ err });
  });

  it('fails a command that does not answer with DeadlineExceeded, once, and leaves the answered ones alone', async () => {
    const before = await timersBefore();
    let answer!: (v: string) => void;
    const answered = withDeadline(new Promise<string>((resolve) => (answer = resolve)), 40);
    const hung = outcome(withDeadline(never(), 40));
    const laterHung = outcome(withDeadline(never(), 40));
    answer('ok');
    expect(await answered).to.equal('ok');
    const [a, b] = await Promise.all([hung, laterHung]);
    expect((a as { err: unknown }).err).to.be.instanceOf(DeadlineExceeded);
    expect((b as { err: unknown }).err).to.be.instanceOf(DeadlineExceeded);
    expect(String((a as { err: Error }).err.message)).to.contain('40 ms');
    // Nothing waits any more: no timer of the deadlines is left.
    expect(timers()).to.equal(before);
  });

  it('gives a command started after the others had answered its own full deadline', async () => {
    await withDeadline(Promise.resolve(1), 30);
    let answer!: (v: number) => void;
    const p = withDeadline(new Promise<number>((resolve) => (answer = resolve)), 30);
    // Answered well within its own deadline, after the first command's would have ended.
    await new Promise((r) => setImmediate(r));
    answer(2);
    expect(await p).to.equal(2);
    expect(await outcome(withDeadline(never(), 30)))
      .to.have.property('err')
      .that.is.instanceOf(DeadlineExceeded);
  });

  it('clears its timer once every command of a length has answered', async () => {
    const before = await timersBefore();
    const all = Array.from({ length: 100 }, (_, i) => withDeadline(Promise.resolve(i), 60_000));
    expect(await Promise.all(all)).to.have.length(100);
    expect(timers()).to.equal(before);
  });
});
