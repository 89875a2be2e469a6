/**
 * The receipt log of one gateway, wired once: the log beside the store (Redis or memory), the deployment's
 * key, the log name, and the signer that keeps the checkpoint up to date. `publicInfo` is what GET
 * /v1/secure publishes so a reviewer can check checkpoints: the log name, the Ed25519 public key (PEM and
 * as a C2SP verifier key) and the checkpoint cadence.
 */
import type { Logger } from '../log.js';
import type { Store } from '../store/store.js';
import type { ReceiptKey } from './key.js';
import type { ReceiptLog } from './log.js';
import { Checkpointer } from './checkpointer.js';
import { validKeyName, verifierKey } from './note.js';

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
  receipts?: { logName?: string; checkpointEveryMs?: number; leaseMs?: number } | undefined;
}

/** `log` is the receipt log beside `store` (app/wire.ts picks it); `store` confirms its replicas hold the leaves. */
export function createReceipts(store: Store, log: ReceiptLog, key: ReceiptKey, cfg: ReceiptsConfig, logger: Logger): Receipts {
  const name = cfg.receipts?.logName ?? `${cfg.principalDomain}/receipts`;
  if (!validKeyName(name)) throw new TypeError(`receipts.logName "${name}" may not hold spaces or "+"`);
  const everyMs = cfg.receipts?.checkpointEveryMs ?? DEFAULT_CHECKPOINT_EVERY_MS;
  const leaseMs = Math.max(cfg.receipts?.leaseMs ?? DEFAULT_LEASE_MS, everyMs);
  const checkpointer = new Checkpointer(log, key, { origin: name, everyMs, leaseMs, log: logger, replicated: () => store.acknowledgeWrites() });
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
      ...(key.ephemeral ? { ephemeral: true } : {}),
    }),
    start: () => checkpointer.start(),
    close: () => checkpointer.close(),
  };
}
