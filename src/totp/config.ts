/** `totp:` of config/gateway.yaml: the TOTP second factor (src/totp). */
import { Type } from '@sinclair/typebox';
import { Strict } from '../config/schema-kit.js';

export const TotpSchema = Strict({
  issuer: Type.String({ minLength: 1, maxLength: 64, pattern: '^[^:]+$', description: 'The issuer an authenticator app shows.' }),
  window: Type.Integer({ minimum: 0, maximum: 2, description: 'Steps of drift accepted either side of the current one.' }),
  maxAttempts: Type.Integer({ minimum: 1, maximum: 20, description: 'Wrong codes allowed per principal within lockoutMs.' }),
  lockoutMs: Type.Integer({ minimum: 60000 }),
  pendingMs: Type.Integer({ minimum: 30000, maximum: 3600000, description: 'How long a pending-2fa session waits for its code.' }),
  recoveryCodes: Type.Integer({ minimum: 4, maximum: 20 }),
});
