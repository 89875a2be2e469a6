/**
 * Reaching behind a gateway's identity cache (src/store/identity-cache.ts): its tracking connections are
 * named, so a test can find them in CLIENT LIST on any node and kill them, as a network fault or an
 * operator's CLIENT KILL would.
 */
import { createClient } from 'redis';
import { TRACKING_NAME } from '../../src/store/identity-cache.js';

/** Kills, on every node given, each connection an identity cache opened (CLIENT KILL by id); returns how many. */
export async function killTrackingConnections(ports: number[]): Promise<number> {
  let killed = 0;
  for (const port of ports) {
    const c = createClient({ url: `redis://127.0.0.1:${port}` });
    c.on('error', () => undefined);
    await c.connect();
    try {
      for (const line of (await c.sendCommand<string>(['CLIENT', 'LIST'])).split('\n')) {
        const id = line.includes(`name=${TRACKING_NAME}`) ? /\bid=(\d+)/.exec(line)?.[1] : undefined;
        if (id) killed += Number(await c.sendCommand(['CLIENT', 'KILL', 'ID', id]));
      }
    } finally {
      c.destroy();
    }
  }
  return killed;
}
