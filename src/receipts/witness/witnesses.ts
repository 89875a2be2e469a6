/**
 * The witnesses a deployment's checkpoints are submitted to (`receipts.witnesses` in config/gateway.yaml:
 * each one's C2SP verifier key and URL). The signer hands each new checkpoint here before it stores it;
 * every witness is asked at once, and the cosignatures that came back are added to the checkpoint's signed
 * note as more signature lines, so the checkpoint the routes serve (alone, and in every receipt) is the
 * cosigned one.
 *
 * A witness that is down or refuses does not stop the log: the checkpoint is stored with the cosignatures
 * it got, and the refusal is logged (`receipts.witness.refused`) — a reader who requires k cosignatures then
 * sees too few and says so. A refusal for inconsistency (422) is the alarm: the witness holds a tree this
 * one does not extend.
 */
import type { Logger } from '../../log.js';
import { WitnessClient } from './client.js';
import { parseWitnessKey, sameWitnessKey } from './cosignature.js';

export interface WitnessConfig {
  /** The witness's verifier key (cosignature/v1): `<name>+<key id>+<base64 key>`. */
  key: string;
  /** Its tlog-witness URL prefix; the gateway POSTs to `<url>/add-checkpoint`. */
  url: string;
}

export class Witnesses {
  readonly #clients: WitnessClient[];
  readonly #log: Logger;

  constructor(configs: readonly WitnessConfig[], timeoutMs: number, log: Logger) {
    this.#clients = configs.map((c) => new WitnessClient(parseWitnessKey(c.key), c.url, timeoutMs));
    const names = new Set(this.#clients.map((c) => c.key.name));
    if (names.size !== this.#clients.length) throw new TypeError('receipts.witnesses: two witnesses have the same name');
    if (this.#clients.some((c, i) => this.#clients.slice(0, i).some((o) => sameWitnessKey(o.key, c.key)))) {
      throw new TypeError('receipts.witnesses: two witnesses have the same key under different names');
    }
    this.#log = log;
  }

  get size(): number {
    return this.#clients.length;
  }

  /** The witnesses' verifier keys, as GET /v1/secure publishes them. */
  keys(): Array<{ name: string; verifierKey: string }> {
    return this.#clients.map((c) => ({ name: c.key.name, verifierKey: c.key.vkey }));
  }

  /**
   * The checkpoint `note` (of `size` leaves) with the cosignature line of every witness that cosigned it.
   * `previous` is the log's last checkpoint size; `proofFrom(old)` is the consistency proof from `old`.
   */
  async cosign(note: string, size: number, previous: number, proofFrom: (old: number) => Promise<Buffer[]>): Promise<string> {
    // One witness's trouble (even a proof that cannot be read) is that witness's refusal, not the checkpoint's.
    const answers = await Promise.all(
      this.#clients.map((c) =>
        c.submit(note, size, previous, proofFrom).catch((err: unknown) => ({ ok: false as const, status: null, reason: (err as Error).message })),
      ),
    );
    const lines: string[] = [];
    answers.forEach((a, i) => {
      const name = this.#clients[i]!.key.name;
      if (a.ok) lines.push(a.line);
      else this.#log.warn('receipts.witness.refused', { witness: name, size, status: a.status, reason: a.reason });
    });
    return note + lines.map((l) => `${l}\n`).join('');
  }
}
