/**
 * Free loopback ports for test servers (redis-server, fake upstreams). The kernel picks the port: we listen on
 * port 0, read what we got and close again. Another process can grab the port in between, so callers that
 * spawn a server on it should be ready to retry with a fresh port when the server reports "address in use".
 */
import net from 'node:net';

export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ port: 0, host, exclusive: true }, () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('listening on port 0 gave no TCP address'));
        return;
      }
      const { port } = address;
      server.close(() => resolve(port));
    });
  });
}
