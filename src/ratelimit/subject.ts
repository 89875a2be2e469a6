/**
 * The subject an address-keyed limit counts against. An IPv4 address is itself; an IPv6 address is its
 * /64, because one end site is normally given a whole /64 (RFC 6177) and can pick a new address in it for
 * every request: counting single IPv6 addresses would let one machine sign up without bound. An
 * IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, what a dual-stack socket reports) is its IPv4 address.
 */
import { isIPv6 } from 'node:net';

/** The eight 16-bit groups of an IPv6 address, as numbers; null when it is not one. */
function groups(address: string): number[] | null {
  const bare = address.replace(/%.*$/, '');
  if (!isIPv6(bare)) return null;
  let text = bare;
  // A trailing dotted quad is two groups.
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const fill = tail === undefined ? [] : new Array<string>(8 - h.length - t.length).fill('0');
  return [...h, ...fill, ...t].map((g) => parseInt(g, 16));
}

export function addressSubject(address: string): string {
  const g = groups(address);
  if (!g) return address;
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return `${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`;
  return `${g
    .slice(0, 4)
    .map((x) => x.toString(16))
    .join(':')}::/64`;
}
