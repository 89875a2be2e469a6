/** `jobs:` of config/gateway.yaml: leases, the sweep, retention and retries of the job engine (src/jobs/engine.ts). */
import { Type } from '@sinclair/typebox';
import { Ms, Strict } from '../config/schema-kit.js';

export const JobsSchema = Strict({
  leaseMs: Ms(),
  sweepEveryMs: Ms(),
  retentionMs: Ms(),
  pollAfterMs: Ms(),
  maxRunMs: Ms(),
  upstreamRetries: Type.Integer({ minimum: 0, maximum: 5 }),
});
