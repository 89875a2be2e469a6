/**
 * `store:` of config/gateway.yaml: memory (one process, nothing kept), or Redis, one primary (`url`) or a
 * cluster (`nodes`). Read at start (src/server.ts -> createStore); REDIS_URL and REDIS_CLUSTER_NODES override it
 * (src/config/load.ts) and are held to this same schema.
 */
import { Type } from '@sinclair/typebox';
import { Const, OneOf, Strict } from '../config/schema-kit.js';

const MemoryStore = Strict({ kind: Const('memory') });

const RedisStore = Strict(
  {
    kind: Const('redis'),
    url: Type.Optional(
      Type.String({
        pattern: '^rediss?://',
        description: 'One primary; with `nodes`, only its scheme, user and password count (TLS and credentials for every cluster node).',
      }),
    ),
    nodes: Type.Optional(
      Type.Array(Type.String({ pattern: '^[^\\s,/@]+:[0-9]{1,5}$' }), {
        minItems: 1,
        description: 'A Redis Cluster: host:port of some of its nodes (REDIS_CLUSTER_NODES); the client discovers the rest.',
      }),
    ),
    prefix: Type.Optional(Type.String({ description: "Prepended to every key; on a cluster it becomes the deployment's hash tag ({pc}:)." })),
    replicaAcks: Type.Optional(
      OneOf([Type.Integer({ minimum: 0, maximum: 16 }), Const('auto')], {
        description:
          'Replicas that must hold a settlement, a grant or a checkpoint before it is answered (Redis WAIT). auto (default): 1 while the money master has a replica online, 0 on a lone primary.',
      }),
    ),
    identityCacheEntries: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 1000000,
        description:
          'Token and principal replies each process keeps, invalidated by Redis (CLIENT TRACKING, RESP3); default 50000. 0 turns the cache off: one identify script per call, for a Redis or proxy without tracking.',
      }),
    ),
    replicaAckTimeoutMs: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 60000,
        description:
          'How long a money write waits for its replicas (default 1000); past it the write stands on the master only, which is counted, logged and never covered by a checkpoint.',
      }),
    ),
  },
  // One of the two places Redis can be: a primary's URL or a cluster's nodes (or both: the URL lends the cluster its credentials).
  {
    anyOf: [
      { properties: { url: true }, required: ['url'] },
      { properties: { nodes: true }, required: ['nodes'] },
    ],
  },
);

export const StoreSchema = OneOf([MemoryStore, RedisStore]);
