/**
 * The live runtime and its reload. `current` is what new requests take; a reload (a change on disk under
 * catalog/, rules/, config/ or policies/, SIGHUP, or the admin API) loads and compiles a whole new runtime and swaps it
 * in only when that succeeded. A bad edit is rejected and logged, and the old runtime keeps serving.
 *
 * The old runtime's upstream pools are closed after the swap; undici's `close()` lets in-flight requests
 * finish first, so a call that started on the old runtime ends on it.
 */
import { existsSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from './load.js';
import { compileRuntime, type CompileOptions, type Runtime } from './compile.js';
import { ConfigError } from './documents.js';
import { startOnlyChanges } from './start-only.js';
import type { Logger } from '../log.js';

/**
 * `needsRestart`: start-only settings (src/config/start-only.ts) this reload read but could not apply; the
 * rest of the reload was applied.
 */
export type ReloadResult = { ok: true; versions: Runtime['versions']; needsRestart: string[] } | { ok: false; problems: string[] };

/** The last reload tried, whatever started it: what /metrics and the admin API report. */
export interface ReloadRecord {
  ok: boolean;
  reason: string;
  /** Epoch ms when it finished. */
  at: number;
}

export class RuntimeHolder {
  #current: Runtime;
  /** The gateway settings the process started with: what start-only settings are still in force. */
  readonly #started: Runtime['gateway'];
  #watchers: FSWatcher[] = [];
  #debounce: NodeJS.Timeout | undefined;
  #reloading: Promise<ReloadResult> | undefined;
  #listeners: Array<(next: Runtime) => void> = [];
  #attempts: Array<(result: ReloadResult, record: ReloadRecord) => void> = [];
  #last: ReloadRecord | null = null;
  #gates: Array<(current: Runtime, next: Runtime) => Promise<string | null>> = [];

  private constructor(
    runtime: Runtime,
    private readonly root: string,
    private readonly options: CompileOptions,
    private readonly log: Logger,
  ) {
    this.#current = runtime;
    this.#started = runtime.gateway;
  }

  /** Loads and compiles the first runtime; throws ConfigError when the configuration is invalid. */
  /** `from`: where the first runtime is read (the root, or a worker's last good copy); reloads read `root`. */
  static async start(root: string, options: CompileOptions, log: Logger, from: string = root): Promise<RuntimeHolder> {
    const runtime = await compileRuntime(loadConfig(from, options.env), options);
    return new RuntimeHolder(runtime, root, options, log);
  }

  get current(): Runtime {
    return this.#current;
  }

  /** The gateway settings the process started with: start-only settings in force (src/config/start-only.ts). */
  get started(): Runtime['gateway'] {
    return this.#started;
  }

  /** Calls `listener` with each runtime swapped in by a reload, right after the swap (not the first one). */
  onSwap(listener: (next: Runtime) => void): void {
    this.#listeners.push(listener);
  }

  /** The last reload tried (null before any): its result and when it finished. */
  get lastReload(): ReloadRecord | null {
    return this.#last;
  }

  /** Calls `listener` after every reload tried, applied or refused (the file watcher's included). */
  onReload(listener: (result: ReloadResult, record: ReloadRecord) => void): void {
    this.#attempts.push(listener);
  }

  /**
   * Adds a check every reload passes before its runtime is swapped in, whatever started it (a change on
   * disk, SIGHUP, the admin API): a reason from `gate` refuses the reload as a bad edit is refused, and the
   * live runtime keeps serving.
   */
  gate(gate: (current: Runtime, next: Runtime) => Promise<string | null>): void {
    this.#gates.push(gate);
  }

  /** Reloads now. Concurrent triggers share one reload rather than racing two swaps. */
  reload(reason: string): Promise<ReloadResult> {
    this.#reloading ??= this.#reload(reason)
      .then((result) => {
        const record = { ok: result.ok, reason, at: Date.now() };
        this.#last = record;
        for (const listener of this.#attempts) {
          try {
            listener(result, record);
          } catch (err) {
            this.log.error('config.reload.listener.failed', { error: (err as Error).name });
          }
        }
        return result;
      })
      .finally(() => {
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
    for (const gate of this.#gates) {
      const refused = await gate(previous, next).catch((err: unknown) => `the reload could not be checked: ${(err as Error).message}`);
      if (refused) {
        this.log.error('config.reload.rejected', { reason, problems: [refused] });
        void next.close();
        return { ok: false, problems: [refused] };
      }
    }
    this.#current = next;
    const needsRestart = startOnlyChanges(this.#started, next.gateway);
    this.log.info('config.reload.applied', { reason, versions: next.versions });
    if (needsRestart.length > 0) this.log.warn('config.reload.needs_restart', { reason, settings: needsRestart });
    for (const listener of this.#listeners) {
      try {
        listener(next);
      } catch (err) {
        this.log.error('config.reload.listener.failed', { error: (err as Error).name });
      }
    }
    void previous.close();
    return { ok: true, versions: next.versions, needsRestart };
  }

  /** Watches the configuration folders; editors write in bursts, so changes are debounced. */
  watch(debounceMs = 200): void {
    // policies/ too, recursively (the Rego sits in policies/admission/, the bundle in policies/build/): a Rego
    // edit without a rebuild is then refused by name at once, and a rebuild is served without a SIGHUP.
    const dirs = ['catalog', 'rules', 'config', ...(existsSync(join(this.root, 'policies')) ? ['policies'] : [])];
    for (const dir of dirs) {
      try {
        const w = watch(join(this.root, dir), { recursive: dir === 'policies' }, () => {
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
