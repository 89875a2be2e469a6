/** `sessions:` of config/gateway.yaml: the session cookie and how long a sign-in lasts (src/sessions). */
import { Type } from '@sinclair/typebox';
import { Strict } from '../config/schema-kit.js';

export const SessionsSchema = Strict({
  cookieName: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'Name of the session cookie.' }),
  idleMs: Type.Integer({ minimum: 60000, description: 'A session ends after this long without a request.' }),
  absoluteMs: Type.Integer({ minimum: 60000, description: 'A session ends this long after sign-in, however active.' }),
});
