/**
 * Waiting on an event rather than for a time. `until` polls a condition the test cannot subscribe to
 * (another process's state, a Redis key, a log line) and returns as soon as it holds; its deadline is a
 * generous bound that turns a hang into a failure naming what never happened, never a measure of speed.
 * `nextEvent` awaits an emitter's event under the same kind of bound.
 */
import type { ChildProcess } from 'node:child_process';
import { once, type EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { inspect } from 'node:util';

/** The default deadline: far above anything a passing test waits for, on a loaded machine included. */
export const GENEROUS_MS = 20_000;

export interface UntilOptions {
  /** What is awaited, for the failure message. */
  what: string;
  timeoutMs?: number;
  /** How often to look (ms). */
  everyMs?: number;
}

/**
 * Resolves with the first truthy value `probe` returns; a probe that throws counts as "not yet" (a server
 * still starting). Rejects, naming `what` and the last error, once `timeoutMs` has passed.
 */
export async function until<T>(probe: () => T | Promise<T>, opts: UntilOptions): Promise<NonNullable<T>> {
  const deadline = Date.now() + (opts.timeoutMs ?? GENEROUS_MS);
  let last: unknown = null;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      const why = last === null ? '' : ` (last error: ${last instanceof Error ? last.message : inspect(last)})`;
      throw new Error(`timed out after ${opts.timeoutMs ?? GENEROUS_MS} ms waiting for ${opts.what}${why}`);
    }
    await sleep(opts.everyMs ?? 20);
  }
}

/** The arguments of `emitter`'s next `event`, or a rejection naming it after `timeoutMs`. */
export async function nextEvent(emitter: EventEmitter, event: string, timeoutMs = GENEROUS_MS): Promise<unknown[]> {
  return once(emitter, event, { signal: AbortSignal.timeout(timeoutMs) }).catch((err: unknown) => {
    if ((err as Error).name === 'AbortError') throw new Error(`no ${event} event within ${timeoutMs} ms`);
    throw err;
  });
}

/** Process starts (a gateway under tsx on a loaded machine) get longer than other waits. */
export const START_MS = 60_000;

/**
 * Resolves with a child's output once `read()` (the output collected so far, by a listener added before
 * this call) matches `re`; rejects when the child exits first, naming its exit, or after `timeoutMs`.
 */
export function untilOutput(child: ChildProcess, read: () => string, re: RegExp, what: string, timeoutMs = START_MS): Promise<string> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!re.test(read())) return;
      done();
      resolve(read());
    };
    const onExit = (code: number | null, signal: string | null) => {
      done();
      reject(new Error(`${what}: the process exited (${code ?? signal}) before its output matched ${re}:\n${read().slice(-2000)}`));
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`${what}: no output matching ${re} within ${timeoutMs} ms:\n${read().slice(-2000)}`));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      child.stdout?.off('data', check);
      child.stderr?.off('data', check);
      child.off('exit', onExit);
    };
    child.stdout?.on('data', check);
    child.stderr?.on('data', check);
    child.once('exit', onExit);
    if (child.exitCode !== null || child.signalCode !== null) onExit(child.exitCode, child.signalCode);
    else check();
  });
}
