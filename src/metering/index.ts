/**
 * The meter's public face: the ledger (ledger.ts, which callers reach through `Meter`) and the balances beside it. Which implementation runs is
 * decided with the other capabilities in src/app/wire.ts.
 */
export type { Meter } from './meter.js';
