/**
 * The live runtime and its reload. `current` is what new requests take; a reload (a change on disk under
 * catalog/, rules/ or config/, SIGHUP, or the admin API) loads and compiles a whole new runtime and swaps it
 * in only when that succeeded. A bad edit is rejected and logged, and the old runtime keeps serving.
 *
 * The old runtime's upstream pools are closed after the swap; undici's `close()` lets in-flight requests
 * finish first, so a call that started on the old runtime ends on it.
 */
import { watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from './load.js';
import { compileRuntime, type CompileOptions, type Runtime } from './compile.js';
import { ConfigError } from './documents.js';
import type { Logger } from '../log.js';

export type ReloadResult = { ok: true; versions: Runtime['versions'] } | { ok: false; problems: string[] };

export class RuntimeHolder {
  #current: Runtime;
  #watchers: FSWatcher[] = [];
  #debounce: NodeJS.Timeout | undefined;
  #reloading: Promise<ReloadResult> | undefined;
  #listeners: Array<(next: Runtime) => void> = [];

  private constructor(
    runtime: Runtime,
    private readonly root: string,
    private readonly options: CompileOptions,
    private readonly log: Logger,
  ) {
    this.#current = runtime;
  }

  /** Loads and compiles the first runtime; throws ConfigError when the configuration is invalid. */
  static async start(root: string, options: CompileOptions, log: Logger): Promise<RuntimeHolder> {
    const runtime = await compileRuntime(loadConfig(root, options.env), options);
    return new RuntimeHolder(runtime, root, options, log);
  }

  get current(): Runtime {
    return this.#current;
  }

  /** Calls `listener` with each runtime swapped in by a reload, right after the swap (not the first one). */
  onSwap(listener: (next: Runtime) => void): void {
    this.#listeners.push(listener);
  }

  /** Reloads now. Concurrent triggers share one reload rather than racing two swaps. */
  reload(reason: string): Promise<ReloadResult> {
    this.#reloading ??= this.#reload(reason).finally(() => {
      this.#reloading = undefined;
    });
    return this.#reloading;
  }

  async #reload(reason: string): Promise<ReloadResult> {
    let next: Runtime;
    try {
      next = await compileRuntime(loadConfig(this.root, this.options.env), this.options);
    } catch (err) {
      const problems = err instanceof ConfigError ? err.problems : [(err as Error).message];
      this.log.error('config.reload.rejected', { reason, problems });
      return { ok: false, problems };
    }
    const previous = this.#current;
    this.#current = next;
    this.log.info('config.reload.applied', { reason, versions: next.versions });
    for (const listener of this.#listeners) {
      try {
        listener(next);
      } catch (err) {
        this.log.error('config.reload.listener.failed', { error: (err as Error).name });
      }
    }
    void previous.close();
    return { ok: true, versions: next.versions };
  }

  /** Watches the configuration folders; editors write in bursts, so changes are debounced. */
  watch(debounceMs = 200): void {
    for (const dir of ['catalog', 'rules', 'config']) {
      try {
        const w = watch(join(this.root, dir), () => {
          clearTimeout(this.#debounce);
          this.#debounce = setTimeout(() => void this.reload(`change in ${dir}/`), debounceMs);
        });
        w.unref();
        this.#watchers.push(w);
      } catch (err) {
        this.log.warn('config.watch.unavailable', { dir, error: (err as Error).message });
      }
    }
  }

  async close(): Promise<void> {
    clearTimeout(this.#debounce);
    for (const w of this.#watchers) w.close();
    await this.#reloading;
    await this.#current.close();
  }
}
