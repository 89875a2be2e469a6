/**
 * One witness, spoken to as C2SP tlog-witness (https://c2sp.org/tlog-witness) defines it:
 *
 *   POST <url>/add-checkpoint
 *     old <size the witness last cosigned>
 *     <consistency proof from that size to the checkpoint's, one base64 hash a line>
 *     <blank line>
 *     <the checkpoint, a signed note>
 *
 * 200 answers the cosignature lines; 409 (text/x.tlog.size) says the size the witness holds, and the
 * submission is made again with a proof from there; 404: the witness does not know the log; 403: the log's
 * signature does not verify for it; 422: the proof does not hold (the witness holds a tree this one does
 * not extend: a fork, and the witness refuses it); 400: the old size is beyond the checkpoint's.
 *
 * The size each witness holds is remembered between checkpoints, so a witness that is up to date costs one
 * request per checkpoint. Only cosignature lines that verify against the configured key are kept.
 *
 * What a witness answers is not trusted: a 409 is unsigned (anyone on the path can forge one), so a size
 * larger than the checkpoint's is this checkpoint's refusal only, never remembered: the witness is asked
 * again, from the log's previous size, at the next checkpoint. At most `MAX_ANSWER_BYTES` of an answer are
 * read, and a redirect is not followed (the witness is the configured URL, nowhere else).
 */
import { checkCosignatureLine, splitNote, type WitnessKey } from './cosignature.js';

/** Cosignature lines are about 130 bytes; a witness has no reason to answer more than a few. */
const MAX_ANSWER_BYTES = 16 * 1024;

export type Submitted = { ok: true; line: string } | { ok: false; status: number | null; reason: string };

export class WitnessClient {
  readonly key: WitnessKey;
  readonly url: string;
  readonly #timeoutMs: number;
  /** The size this witness last said it holds for the log (null: not known yet). */
  #holds: number | null = null;

  constructor(key: WitnessKey, url: string, timeoutMs: number) {
    this.key = key;
    this.url = url.replace(/\/+$/, '');
    this.#timeoutMs = timeoutMs;
  }

  /**
   * Asks the witness to cosign `note` (a checkpoint of `size` leaves). `guess` is the old size to try when
   * the witness's is not known (the log's previous checkpoint); `proofFrom(old)` builds the consistency
   * proof from the tree of `old` leaves.
   */
  async submit(note: string, size: number, guess: number, proofFrom: (old: number) => Promise<Buffer[]>): Promise<Submitted> {
    const parts = splitNote(note);
    if (!parts) return { ok: false, status: null, reason: 'the checkpoint is not a signed note' };
    for (let attempt = 0; attempt < 3; attempt++) {
      const old = this.#holds ?? guess;
      if (old > size) {
        // Forgotten at once: the next checkpoint asks the witness afresh (a forged 409 costs one checkpoint).
        this.#holds = null;
        return {
          ok: false,
          status: 409,
          reason: `the witness says it holds a tree of ${old} leaves, larger than this checkpoint's ${size}: it has seen another tree of this log, or the answer was forged (it is asked again at the next checkpoint)`,
        };
      }
      const proof = old === 0 || old === size ? [] : await proofFrom(old);
      const body = `old ${old}\n${proof.map((h) => `${h.toString('base64')}\n`).join('')}\n${note}`;
      let res: Response;
      try {
        res = await fetch(`${this.url}/add-checkpoint`, { method: 'POST', body, redirect: 'manual', signal: AbortSignal.timeout(this.#timeoutMs) });
      } catch (err) {
        return { ok: false, status: null, reason: `cannot reach the witness: ${(err as Error).message}` };
      }
      if (res.status >= 300 && res.status < 400) {
        await res.body?.cancel().catch(() => undefined);
        this.#holds = null;
        return { ok: false, status: res.status, reason: `the witness answered a redirect (${res.status}), which is not followed: configure its URL itself` };
      }
      const text = await readCapped(res);
      if (text === null) {
        this.#holds = null;
        return { ok: false, status: res.status, reason: `the witness answered more than ${MAX_ANSWER_BYTES} bytes: not read` };
      }
      if (res.status === 409) {
        const held = /^(0|[1-9][0-9]{0,15})\n?$/.exec(text);
        if (!held) return { ok: false, status: 409, reason: 'the witness answered 409 without its tree size' };
        this.#holds = Number(held[1]);
        continue;
      }
      if (res.status !== 200) {
        // The size it holds is unknown again: ask afresh next time.
        this.#holds = null;
        return { ok: false, status: res.status, reason: refusal(res.status) };
      }
      const line = text.split('\n').find((l) => checkCosignatureLine(parts.text, l, this.key) !== null);
      if (!line) return { ok: false, status: 200, reason: 'the witness answered no cosignature that verifies with its configured key' };
      this.#holds = size;
      return { ok: true, line };
    }
    return { ok: false, status: 409, reason: 'the witness kept answering that it holds another tree size' };
  }
}

/** The answer's text, or null when it runs past MAX_ANSWER_BYTES (or breaks off: then what came is kept). */
async function readCapped(res: Response): Promise<string | null> {
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let length = 0;
  const reader = res.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      length += value.byteLength;
      if (length > MAX_ANSWER_BYTES) {
        await reader.cancel().catch(() => undefined);
        return null;
      }
      chunks.push(value);
    }
  } catch {
    // A connection cut mid-answer: what came is checked like any answer (it will hold no valid line).
  }
  return Buffer.concat(chunks).toString('utf8');
}

function refusal(status: number): string {
  switch (status) {
    case 404:
      return 'the witness does not know this log (its origin and key are not configured there)';
    case 403:
      return "the witness cannot verify the log's signature (it holds another key for this log)";
    case 422:
      return 'the witness refused the checkpoint as inconsistent with the tree it already cosigned: this tree does not extend it (a fork of the log)';
    case 400:
      return 'the witness refused the request (bad old size or body)';
    case 429:
      return 'the witness asked to slow down (429)';
    default:
      return `the witness answered ${status}`;
  }
}
