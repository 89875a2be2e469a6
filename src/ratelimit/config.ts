/** `rateLimits:` of config/gateway.yaml: requests per minute (or hour, or day) by who or where they come from; an absent limit is off. */
import { Type, type Static } from '@sinclair/typebox';
import { Strict } from '../config/schema-kit.js';

const PerUnit = (description: string) => Type.Optional(Type.Integer({ minimum: 1, description }));

export const RateLimitsSchema = Strict(
  {
    perPrincipal: PerUnit('Chat and job calls per principal per minute.'),
    perAddress: PerUnit('Requests to public routes (no token: the catalog, knowledge, discovery) per client address per minute.'),
    failedAuthPerAddress: PerUnit(
      'Failed authentication attempts (refused tokens, failed sign-ins) per client address per minute; past it the address is refused before any token is looked at.',
    ),
    mcpPerAddress: PerUnit('POST /mcp requests on the site and graph hosts per client address (an IPv6 address counts as its /64) per minute.'),
    challengesPerAddress: PerUnit(
      'Sign-in challenges and nonces (passkey options, SIWE nonce and options, smart-account options, recovery challenge) per client address (IPv6: its /64) per minute.',
    ),
    staticPerAddress: PerUnit(
      'Large static answers of the site host (/llms.txt, /llms-full.txt, /agent-quickstart.md, /docs/*.md) per client address per minute; a 304 Not Modified answer is not counted.',
    ),
    signUpsPerAddressHour: PerUnit('New accounts (the first sign-in of a passkey, wallet or smart account) per client address (IPv6: its /64) per hour.'),
    applicationsPerAccountDay: PerUnit(
      'Research applications (POST /v1/research/applications) one account may file per day (a sliding 24 h); counted only for applications that validate.',
    ),
    addressHeader: Type.Optional(
      Type.String({
        pattern: '^[a-z0-9-]+$',
        description:
          'Behind a reverse proxy: the header it writes the client address into (e.g. x-forwarded-for; its last entry is used). Without it the peer address is used.',
      }),
    ),
  },
  {
    description:
      'Rate limits per minute (sliding), kept in the store so every instance shares them; answered 429 rate-limited with retry-after. An absent limit is off (src/ratelimit).',
  },
);
export type RateLimitSettings = Static<typeof RateLimitsSchema>;
