/** `admin:` of config/gateway.yaml: the named operators and their scopes (read at start by operators.ts). */
import { Type } from '@sinclair/typebox';
import { EnvName, Strict } from '../config/schema-kit.js';

export type OperatorScope = 'read-only' | 'billing' | 'full';

export const AdminSchema = Strict({
  operators: Type.Optional(
    Type.Array(
      Strict({
        name: Type.String({ pattern: '^[a-z0-9][a-z0-9-]*$', description: 'Logged with each use.' }),
        tokenEnv: EnvName('Environment variable holding the token (never the token itself).'),
        scope: Type.Unsafe<OperatorScope>({ enum: ['read-only', 'billing', 'full'] }),
      }),
      { maxItems: 64, description: 'Named operator tokens besides PORTCULLIS_ADMIN_TOKEN (which is full). Read at start.' },
    ),
  ),
});
