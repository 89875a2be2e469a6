/** `graph:` of config/gateway.yaml: the graph host's worker threads (graph-pool.ts; defaults there). */
import { Type } from '@sinclair/typebox';
import { Ms, Strict } from '../config/schema-kit.js';

export const GraphSchema = Strict(
  {
    workers: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 64,
        description: 'Worker threads (default 1); each holds its own copy of the knowledge (about 80 MiB). Read when the pool starts.',
      }),
    ),
    queue: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'Calls that may wait for a busy worker (default 8); past it a request is refused 503 tool-busy before it is read.',
      }),
    ),
    callMs: Type.Optional(
      Ms({ description: "A call's budget of worker time (default 2000); past it the worker is stopped and the call refused 422 tool-call-too-long." }),
    ),
  },
  { description: "The graph host's MCP tool calls run in worker threads, off the event loop every host answers on (src/mcp/graph-pool.ts)." },
);
