/**
 * A graph-query worker thread (graph-pool.ts starts it): it loads the knowledge once, says `ready`, then
 * answers one tool call at a time — `{id, answer}`, `{id, refused: {code, message, param}}` for a call the
 * tool refuses (bad arguments, unknown id: a GatewayError, as the HTTP route would answer it), or
 * `{id, failed}` for anything else. A call that runs past its budget is not stopped here: the pool ends the
 * whole thread, the only way to stop a synchronous walk.
 */
import { parentPort } from 'node:worker_threads';
import { GatewayError } from '../errors.js';
import { sharedKnowledge } from '../knowledge/index.js';
import { runHere } from './graph-server.js';

const port = parentPort!;
sharedKnowledge();
const run = runHere(sharedKnowledge);
port.on('message', (m: { id: number; name: string; args: unknown }) => {
  run(m.name, m.args).then(
    (answer) => port.postMessage({ id: m.id, answer }),
    (err: unknown) => {
      if (err instanceof GatewayError) port.postMessage({ id: m.id, refused: { code: err.code, message: err.message, param: err.param } });
      else port.postMessage({ id: m.id, failed: err instanceof Error ? err.message : String(err) });
    },
  );
});
port.postMessage({ ready: true });
