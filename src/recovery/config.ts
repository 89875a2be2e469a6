/** `recovery:` of config/gateway.yaml: account recovery's delay and its challenge's time (src/recovery). */
import { Type } from '@sinclair/typebox';
import { Strict } from '../config/schema-kit.js';

export const RecoverySchema = Strict({
  delayHours: Type.Integer({
    minimum: 48,
    maximum: 720,
    description: 'A recovery completes no sooner than this long after it starts (the spec: at least 48 hours).',
  }),
  challengeMs: Type.Integer({ minimum: 10000, maximum: 600000 }),
});
