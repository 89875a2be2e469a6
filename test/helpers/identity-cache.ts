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
      killed += await killOn(c);
    } finally {
      c.destroy();
    }
  }
  return killed;
}

/** Kills the identity-cache connections of the server `c` is connected to, through `c`. */
async function killOn(c: Pick<ReturnType<typeof createClient>, 'sendCommand'>): Promise<number> {
  let killed = 0;
  for (const line of (await c.sendCommand<string>(['CLIENT', 'LIST'])).split('\n')) {
    const id = line.includes(`name=${TRACKING_NAME}`) ? /\bid=(\d+)/.exec(line)?.[1] : undefined;
    if (id) killed += Number(await c.sendCommand(['CLIENT', 'KILL', 'ID', id]));
  }
  return killed;
}

/**
 * Kills a single server's identity-cache connections and keeps them from coming back (maxclients lowered to
 * the connections still open, so every new one is refused) until the returned release is called: the store
 * answers on the gateway's main connection while its identity cache fails closed, as when a restarted Redis
 * has taken one connection back before the other.
 */
export async function holdTrackingConnectionsDown(port: number): Promise<() => Promise<void>> {
  const c = createClient({ url: `redis://127.0.0.1:${port}` });
  c.on('error', () => undefined);
  await c.connect();
  const before = (await c.configGet('maxclients'))['maxclients']!;
  const open = (await c.sendCommand<string>(['CLIENT', 'LIST'])).split('\n').filter((l) => l.trim() !== '');
  const tracking = open.filter((l) => l.includes(`name=${TRACKING_NAME}`)).length;
  if (tracking < 1) throw new Error('no identity-cache connection to hold down');
  // Lowered first, so a reconnect that races the kill is refused too.
  await c.configSet('maxclients', String(open.length - tracking));
  await killOn(c);
  return async () => {
    try {
      await c.configSet('maxclients', before);
    } finally {
      c.destroy();
    }
  };
}
