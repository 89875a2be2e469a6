/**
 * The ledger: the money of a call, in domain words. `reserve` holds a call's worst case (or refuses it),
 * `settle` charges what the call used and writes its receipt, `release` lets a hold go without a receipt.
 * What must be atomic with the money is the ledger's business too: a call's job is opened in its
 * reservation's own write and closed in its settlement's (an answer is never stored without its charge and
 * receipt, nor charged without being stored), and a receipt is sequenced in the receipt log in the same
 * write as its charge.
 *
 * Implementations (one contract suite, test/metering/contract.test.ts, runs both):
 *   redis-meter.ts   one Lua script per operation, composed from lua/*.lua and the job and receipt
 *                    libraries (src/jobs/lua, src/receipts/lua) at load: each operation is one atomic write
 *   memory-meter.ts  the same steps in TypeScript with no await in between, beside the memory job store
 * The admission rule has one definition of its inputs (limits.ts `Admission`) that both consume.
 */
import type { JobRecord } from '../jobs/job.js';
import type { CreateOutcome } from '../jobs/store.js';
import type { Receipt } from '../store/store.js';
import type { DecisionRide } from '../decisions/store.js';
import type { Reservation, ReserveRequest, SettleInput, Settlement } from './money.js';

/** A job opened in its call's reservation: created unless a live job has its id, or not at all when refused. */
export interface JobOpening {
  /** The job as the engine claimed it; the ledger fills in its reservation as decided. */
  job: JobRecord;
  retentionMs: number;
  /** Told what opening found, once the reservation is made (not on a refusal, nor on a repeated reserve). */
  opened(outcome: CreateOutcome): void;
}

/** A job's end, written in its call's settlement while its owner still owns it. */
export interface JobClosing {
  jobId: string;
  /** The instance that runs the job: a runner that lost its lease writes nothing. */
  owner: string;
  patch: Partial<JobRecord>;
  retentionMs: number;
  /** Told whether the change applied (false: the owner no longer owns a live job), once the settlement is written. */
  closed(applied: boolean): void;
}

export interface Ledger {
  /**
   * Holds the worst case, or throws the GatewayError of the first limit it meets, having changed nothing.
   * `job`, if given, is opened in the same write. `decision`, if given, is the call's decision record: written
   * in the same write when the ledger can (before the reservation is judged, whatever its outcome, never
   * failing it), else on its own (`decision.alone()`).
   */
  reserve(req: ReserveRequest, job?: JobOpening, decision?: DecisionRide): Promise<Reservation>;
  /**
   * Charges, releases the rest and writes the receipt `build` returns (and its log leaf) in one atomic write,
   * once per call id; a repeat returns the settlement stored the first time. `build` sees the settlement;
   * so does `job`, whose closing (if given) is written in the same write.
   */
  settle(reservation: Reservation, input: SettleInput, build: (s: Settlement) => Receipt, job?: (s: Settlement) => JobClosing): Promise<Settlement>;
  /** Releases a reservation without a receipt (its call is answered by another job); idempotent. */
  release(reservation: Reservation): Promise<void>;
  /** Stores the receipt (and its log leaf) of a call that holds nothing (refused before or at reserve); once per id. */
  record(receipt: Receipt): Promise<Receipt>;
}
