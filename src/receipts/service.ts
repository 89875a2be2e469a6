/**
 * The receipt log of one gateway, wired once: the log beside the store (Redis or memory), the deployment's
 * key, the log name, and the signer that keeps the checkpoint up to date. `publicInfo` is what GET
 * /v1/secure publishes so a reviewer can check checkpoints: the log name, the Ed25519 public key (PEM and
 * as a C2SP verifier key), the checkpoint cadence and the witnesses that cosign its checkpoints (witness/).
 */
import type { Logger } from '../log.js';
import type { Store } from '../store/store.js';
import type { ReceiptKey } from './key.js';
import type { ReceiptLog } from './log.js';
import { Checkpointer } from './checkpointer.js';
import { validKeyName, verifierKey } from './note.js';
import { Witnesses, type WitnessConfig } from './witness/witnesses.js';

export const DEFAULT_CHECKPOINT_EVERY_MS = 1000;
export const DEFAULT_LEASE_MS = 5000;

export interface ReceiptLogInfo {
  /** The origin line of every checkpoint, and the key name its signature is made under. */
  name: string;
  alg: 'Ed25519';
  keyId: string;
  publicKeyPem: string;
  /** The key as C2SP signed-note verifier key: `<name>+<key id>+<base64 key>`. */
  verifierKey: string;
  checkpointEveryMs: number;
  hashing: 'RFC 6962 (SHA-256), leaves = RFC 8785 canonical receipts';
  checkpointFormat: 'C2SP tlog-checkpoint, signed as a C2SP signed note';
  /**
   * The witnesses each checkpoint is submitted to (C2SP tlog-witness), by name and cosignature verifier
   * key: what a reader passes to `portcullis receipt verify --witness`. Absent when none is configured.
   */
  witnesses?: Array<{ name: string; verifierKey: string }>;
  /** True when no key is configured: checkpoints verify only against this process's key. */
  ephemeral?: boolean;
}

export interface Receipts {
  readonly log: ReceiptLog;
  readonly key: ReceiptKey;
  readonly name: string;
  readonly checkpointer: Checkpointer;
  publicInfo(): ReceiptLogInfo;
  start(): void;
  close(): Promise<void>;
}

export interface ReceiptsConfig {
  principalDomain: string;
  receipts?: { logName?: string; checkpointEveryMs?: number; leaseMs?: number; witnesses?: WitnessConfig[] } | undefined;
}

/** `log` is the receipt log beside `store` (app/wire.ts picks it); `store` confirms its replicas hold the leaves. */
export function createReceipts(store: Store, log: ReceiptLog, key: ReceiptKey, cfg: ReceiptsConfig, logger: Logger): Receipts {
  const name = cfg.receipts?.logName ?? `${cfg.principalDomain}/receipts`;
  if (!validKeyName(name)) throw new TypeError(`receipts.logName "${name}" may not hold spaces or "+"`);
  const everyMs = cfg.receipts?.checkpointEveryMs ?? DEFAULT_CHECKPOINT_EVERY_MS;
  const leaseMs = Math.max(cfg.receipts?.leaseMs ?? DEFAULT_LEASE_MS, everyMs);
  // A witness is given half the lease to answer, so a slow one cannot make the signer outlive its lease.
  const witnesses = cfg.receipts?.witnesses?.length ? new Witnesses(cfg.receipts.witnesses, Math.floor(leaseMs / 2), logger) : null;
  const checkpointer = new Checkpointer(log, key, {
    origin: name,
    everyMs,
    leaseMs,
    log: logger,
    replicated: () => store.acknowledgeWrites(),
    cosign: witnesses ? (note, size, previous, proofFrom) => witnesses.cosign(note, size, previous, proofFrom) : undefined,
  });
  return {
    log,
    key,
    name,
    checkpointer,
    publicInfo: () => ({
      name,
      alg: 'Ed25519',
      keyId: key.keyId,
      publicKeyPem: key.publicKeyPem,
      verifierKey: verifierKey(name, key.publicKey),
      checkpointEveryMs: everyMs,
      hashing: 'RFC 6962 (SHA-256), leaves = RFC 8785 canonical receipts',
      checkpointFormat: 'C2SP tlog-checkpoint, signed as a C2SP signed note',
      ...(witnesses ? { witnesses: witnesses.keys() } : {}),
      ...(key.ephemeral ? { ephemeral: true } : {}),
    }),
    start: () => checkpointer.start(),
    close: () => checkpointer.close(),
  };
}
