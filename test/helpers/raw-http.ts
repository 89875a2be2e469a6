/**
 * Raw TCP clients for the listener bounds tests: what a slow, stalled or malformed client sends, byte by
 * byte, which fetch() cannot do. `exchange` collects what the server wrote until it closed the connection.
 */
import { connect, type Socket } from 'node:net';

export interface RawConnection {
  socket: Socket;
  /** Everything the server wrote, once it closed the connection (or the socket failed). */
  closed: Promise<string>;
}

export function rawConnect(url: string): Promise<RawConnection> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let received = '';
    socket.on('data', (c: Buffer) => (received += c.toString('utf8')));
    const closed = new Promise<string>((done) => socket.once('close', () => done(received)));
    socket.once('connect', () => resolve({ socket, closed }));
    socket.once('error', (err) => {
      if (!socket.readyState || socket.connecting) reject(err);
    });
  });
}

/** Status line and JSON body of a raw HTTP/1.1 answer. */
export function parseRaw(text: string): { status: number; body: any } {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
  const at = text.indexOf('\r\n\r\n');
  let body: unknown;
  try {
    body = at >= 0 ? JSON.parse(text.slice(at + 4)) : null;
  } catch {
    body = text.slice(at + 4);
  }
  return { status, body };
}
