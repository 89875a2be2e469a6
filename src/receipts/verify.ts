/**
 * Offline checks of what the log hands out, shared by `portcullis receipt verify|audit` and the tests:
 *
 *   verifyReceiptBundle  a receipt as GET /v1/receipts/{id} answers it: its leaf hash (recomputed from the
 *                        receipt itself), its inclusion proof, and the checkpoint's signature
 *   verifyConsistencyBundle  two signed checkpoints and the consistency proof between them
 *
 * Every failure names what did not hold, so a reviewer can tell a changed receipt from a wrong key.
 */
import type { KeyObject } from 'node:crypto';
import { receiptLeafHash } from './canonical.js';
import { verifyConsistency, verifyInclusion } from './merkle.js';
import { openCheckpoint, type Checkpoint } from './note.js';

export type Checked<T> = ({ ok: true } & T) | { ok: false; reason: string };

function decodeProof(proof: unknown): Buffer[] | string {
  if (!Array.isArray(proof) || proof.some((p) => typeof p !== 'string')) return 'the proof is not a list of base64 hashes';
  const out = (proof as string[]).map((p) => Buffer.from(p, 'base64'));
  return out.some((b) => b.length !== 32) ? 'a proof hash is not 32 bytes of base64' : out;
}

/**
 * Checks a receipt bundle. `checkpointNote`, when given, replaces the one in the bundle (a checkpoint the
 * reviewer obtained independently); the proof must then be for its tree size.
 */
export function verifyReceiptBundle(
  bundle: unknown,
  publicKey: KeyObject,
  checkpointNote?: string,
): Checked<{ id: string; logIndex: number; checkpoint: Checkpoint }> {
  if (!bundle || typeof bundle !== 'object' || Array.isArray(bundle)) return { ok: false, reason: 'not a receipt object' };
  const r = bundle as Record<string, unknown>;
  const id = String(r['id']);
  if (r['pending'] === true)
    return { ok: false, reason: `receipt ${id} is pending: no checkpoint covers leaf ${String(r['logIndex'])} yet; fetch it again in a moment` };
  const index = r['logIndex'];
  if (typeof index !== 'number' || !Number.isSafeInteger(index) || index < 0) return { ok: false, reason: 'the receipt has no logIndex' };
  const note = checkpointNote ?? r['checkpoint'];
  if (typeof note !== 'string') return { ok: false, reason: 'the receipt carries no checkpoint' };
  const opened = openCheckpoint(note, publicKey);
  if (!opened.ok) return opened;
  const cp = opened.checkpoint;
  if (index >= cp.size) return { ok: false, reason: `leaf ${index} is not in the checkpoint's tree of ${cp.size}` };
  const proof = decodeProof(r['inclusionProof']);
  if (typeof proof === 'string') return { ok: false, reason: proof };
  let leaf: Buffer;
  try {
    leaf = receiptLeafHash(r);
  } catch {
    return { ok: false, reason: 'the receipt cannot be canonicalized' };
  }
  if (!verifyInclusion(index, cp.size, leaf, proof, cp.root)) {
    return {
      ok: false,
      reason: checkpointNote
        ? `the inclusion proof does not lead from this receipt to the root of the given checkpoint (size ${cp.size}); the receipt or its proof was changed, or the proof is for another tree size`
        : 'the inclusion proof does not lead from this receipt to the checkpoint root: the receipt or its proof was changed',
    };
  }
  return { ok: true, id, logIndex: index, checkpoint: cp };
}

/** Checks that the log of checkpoint `fromNote` is a prefix of that of `toNote`, by `proof`. */
export function verifyConsistencyBundle(fromNote: string, toNote: string, proof: unknown, publicKey: KeyObject): Checked<{ from: Checkpoint; to: Checkpoint }> {
  const a = openCheckpoint(fromNote, publicKey);
  if (!a.ok) return { ok: false, reason: `the older checkpoint: ${a.reason}` };
  const b = openCheckpoint(toNote, publicKey, a.checkpoint.origin);
  if (!b.ok) return { ok: false, reason: `the newer checkpoint: ${b.reason}` };
  const [from, to] = [a.checkpoint, b.checkpoint];
  if (from.size > to.size) return { ok: false, reason: `the first checkpoint (size ${from.size}) is newer than the second (size ${to.size})` };
  const hashes = decodeProof(proof);
  if (typeof hashes === 'string') return { ok: false, reason: hashes };
  if (from.size === 0) return hashes.length === 0 ? { ok: true, from, to } : { ok: false, reason: 'a proof from the empty tree must be empty' };
  if (!verifyConsistency(from.size, to.size, from.root, to.root, hashes)) {
    return {
      ok: false,
      reason: `the consistency proof does not show the tree of ${from.size} to be a prefix of the tree of ${to.size}: the log was rewritten, or the proof is wrong`,
    };
  }
  return { ok: true, from, to };
}
