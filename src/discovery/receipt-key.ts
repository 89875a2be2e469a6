/**
 * The receipt signing key's id, as the control-plane profile publishes it. Read where the key lives: the
 * receipt log (`deps.receipts`, from the receipts work) when the deps carry one, else the meter's signer
 * (the gateway before it). Duck-typed on purpose so this file compiles on either side of that merge; once
 * both are in, it can read `deps.receipts.publicInfo()` directly.
 */
import type { Deps } from '../app/deps.js';

/** What these routes use of the gateway's parts, and nothing more. */
export type ReceiptKeyDeps = Pick<Deps, 'receipts'>;

interface KeyInfo {
  alg: string;
  keyId: string;
}

export function receiptKey(deps: ReceiptKeyDeps): KeyInfo | null {
  const d = deps as unknown as { receipts?: { publicInfo(): KeyInfo }; meter?: { signer?: { keyId: string } } };
  if (d.receipts) {
    const k = d.receipts.publicInfo();
    return { alg: k.alg, keyId: k.keyId };
  }
  return d.meter?.signer ? { alg: 'Ed25519', keyId: d.meter.signer.keyId } : null;
}
