/** `receipts:` of config/gateway.yaml: the receipt log's key, name, checkpoint cadence and witnesses, read at start (service.ts, key.ts). */
import { Type } from '@sinclair/typebox';
import { Strict } from '../config/schema-kit.js';

export const ReceiptsSchema = Strict({
  keyFile: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        "Path (relative to the configuration root) of the PKCS#8 PEM Ed25519 private key the receipt log's checkpoints are signed with (every gateway of a deployment holds the same one). PORTCULLIS_RECEIPT_KEY (the PEM itself) takes precedence; with neither, an ephemeral key is generated at start-up. Read at start.",
    }),
  ),
  logName: Type.Optional(
    Type.String({
      pattern: '^[^\\s+]+$',
      maxLength: 200,
      description:
        "The receipt log's name: the origin line of its checkpoints (C2SP tlog-checkpoint) and the name of its signing key. A schema-less URL is usual, e.g. gateway.example.com/receipts. Default: <principalDomain>/receipts. Read at start; never change it for a running log.",
    }),
  ),
  checkpointEveryMs: Type.Optional(
    Type.Integer({
      minimum: 50,
      maximum: 60000,
      description: 'A receipt is covered by a signed checkpoint at most about this long after it is written (default 1000).',
    }),
  ),
  leaseMs: Type.Optional(
    Type.Integer({
      minimum: 100,
      maximum: 600000,
      description:
        'The signing lease: one gateway signs checkpoints at a time; when it dies, another takes over within this long (default 5000; at least checkpointEveryMs).',
    }),
  ),
  witnesses: Type.Optional(
    Type.Array(
      Strict({
        key: Type.String({
          pattern: '^[^\\s+]+\\+[0-9a-fA-F]{8}\\+[A-Za-z0-9+/]+=*$',
          description: "The witness's cosignature verifier key (C2SP tlog-cosignature, Ed25519): <name>+<key id>+<base64 key>.",
        }),
        url: Type.String({ pattern: '^https?://', description: "The witness's tlog-witness URL prefix; checkpoints are POSTed to <url>/add-checkpoint." }),
      }),
      {
        maxItems: 16,
        description:
          "Witnesses that cosign each checkpoint (C2SP tlog-witness): the signer submits every new checkpoint with a consistency proof to each, and stores and serves it with the cosignatures they return. Each witness must have this log's name and verifier key configured. Read at start.",
      },
    ),
  ),
});
