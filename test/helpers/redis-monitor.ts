/**
 * What clients sent to a Redis while something ran, as MONITOR saw it: the lines between two ECHO markers
 * sent on a connection of its own, with the commands scripts run themselves left out (MONITOR lists those
 * with "lua" where a client's address would be). Tests use it to hold a call to the commands it may send;
 * the bench's "Redis commands per call" reads the same lines.
 */
import { createClient } from 'redis';

let markers = 0;

export async function commandsDuring(redisUrl: string, act: () => Promise<unknown>): Promise<string[]> {
  const n = ++markers;
  const start = `monitor-start-${process.pid}-${n}`;
  const end = `monitor-end-${process.pid}-${n}`;
  const monitor = createClient({ url: redisUrl });
  const marker = createClient({ url: redisUrl });
  await Promise.all([monitor.connect(), marker.connect()]);
  const lines: string[] = [];
  let sawEnd: () => void = () => undefined;
  const ended = new Promise<void>((resolve) => (sawEnd = resolve));
  try {
    await monitor.monitor((line) => {
      lines.push(String(line));
      if (String(line).includes(end)) sawEnd();
    });
    await marker.sendCommand(['ECHO', start]);
    await act();
    await marker.sendCommand(['ECHO', end]);
    await ended;
  } finally {
    monitor.destroy();
    marker.destroy();
  }
  const from = lines.findIndex((l) => l.includes(start));
  const to = lines.findIndex((l) => l.includes(end));
  return lines.slice(from + 1, to).filter((l) => !/\[\d+ lua\]/.test(l));
}
