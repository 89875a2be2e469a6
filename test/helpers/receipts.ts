/**
 * Reading receipts as a principal does (GET /v1/receipts/{id}), waiting out `pending` until a checkpoint
 * covers the receipt (receipts.checkpointEveryMs, 1 s by default).
 */
import { setTimeout as sleep } from 'node:timers/promises';

export async function provenReceipt(apiUrl: string, token: string, id: string, withinMs = 5000): Promise<Record<string, any>> {
  const until = Date.now() + withinMs;
  for (;;) {
    const res = await fetch(`${apiUrl}/v1/receipts/${id}`, { headers: { authorization: `Bearer ${token}` } });
    const body = (await res.json()) as Record<string, any>;
    if (res.status !== 200) throw new Error(`GET /v1/receipts/${id}: ${res.status} ${JSON.stringify(body)}`);
    if (!body['pending']) return body;
    if (Date.now() > until) throw new Error(`receipt ${id} still pending after ${withinMs} ms`);
    await sleep(50);
  }
}
