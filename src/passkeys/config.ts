/** `passkeys:` of config/gateway.yaml: the relying party's name and the ceremony's time (src/passkeys); the rpID is the auth origin's host name. */
import { Type } from '@sinclair/typebox';
import { Strict } from '../config/schema-kit.js';

export const PasskeysSchema = Strict({
  rpName: Type.String({ minLength: 1, maxLength: 64, description: "The relying party's name an authenticator shows." }),
  challengeMs: Type.Integer({ minimum: 10000, maximum: 600000, description: "How long a ceremony's challenge stays usable." }),
});
