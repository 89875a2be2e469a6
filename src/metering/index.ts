/**
 * The meter's public face: the ledger (ledger.ts) and the balances beside it. Which implementation runs is
 * decided with the other capabilities in src/app/wire.ts.
 */
export type { Meter } from './meter.js';
export type { Ledger, JobClosing, JobOpening } from './ledger.js';
export type { MeterOptions } from './memory-meter.js';
