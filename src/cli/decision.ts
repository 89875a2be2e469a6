/**
 * `portcullis decision replay <receipt.json | receipt id> [--key pubkey.pem] [--url API] [--json] [--no-opa]`
 *
 * A reviewer re-derives a receipt's decision (src/decisions/replay.ts): the receipt (a file as
 * GET /v1/receipts/{id} answers it, or fetched with its proof by id from the admin API), its decision
 * record (admin API), and the versions the record names (GET /v1/secure/history on the API, public) are
 * checked link by link, and the decision is evaluated again with that version's policy — opa-wasm, and
 * `opa eval` on its Rego when the opa binary is at hand (PORTCULLIS_OPA, or the pinned one setup builds).
 * Prints each check and then the same decision, or exactly what differs.
 *
 * The admin API is PORTCULLIS_ADMIN_URL (or PORTCULLIS_ADMIN_PORT on loopback) with PORTCULLIS_ADMIN_TOKEN
 * (a read-only operator suffices); the API is --url, PORTCULLIS_API_URL or http://127.0.0.1:8080. The log's
 * key is --key, else the one GET /v1/secure publishes. Exit 0: every check held and the decision is the
 * same; 1: something did not hold or differs; 2: usage, or a gateway that cannot be reached.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { KeyObject } from 'node:crypto';
import { publicKeyFromPem } from '../receipts/key.js';
import { parseStrictJson } from '../receipts/strict-json.js';
import type { DecisionRecord } from '../decisions/record.js';
import type { StoredVersion } from '../decisions/store.js';
import { replayReceipt, type ReplayReport } from '../decisions/replay.js';
import { findOpa } from '../decisions/evaluate.js';

export class CliUsage extends Error {}

function adminBase(): string {
  const env = process.env;
  return (env['PORTCULLIS_ADMIN_URL'] ?? `http://127.0.0.1:${env['PORTCULLIS_ADMIN_PORT'] ?? '8090'}`).replace(/\/+$/, '');
}

export function apiBase(url?: string): string {
  return (url ?? process.env['PORTCULLIS_API_URL'] ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
}

/** GET on the admin API; null on 404 when `missingOk`. */
export async function adminGet(path: string, missingOk = false): Promise<any> {
  const token = process.env['PORTCULLIS_ADMIN_TOKEN'];
  if (!token) throw new CliUsage('PORTCULLIS_ADMIN_TOKEN is not set');
  return getJson(`${adminBase()}/admin${path}`, { authorization: `Bearer ${token}` }, missingOk);
}

export async function getJson(url: string, headers: Record<string, string> = {}, missingOk = false): Promise<any> {
  let res: Response;
  try {
    res = await fetch(url, { headers });
  } catch {
    throw new CliUsage(`cannot reach ${url} (is the gateway running?)`);
  }
  const body = (await res.json().catch(() => ({}))) as { error?: { code?: string; message?: string } };
  if (res.status === 404 && missingOk) return null;
  if (!res.ok) throw new CliUsage(`${url}: ${body.error?.code ?? res.status}: ${body.error?.message ?? 'request failed'}`);
  return body;
}

function printReplay(r: ReplayReport): void {
  const lines = [`receipt ${r.receipt}, decision ${r.decision ?? '(none)'}`];
  for (const c of r.checks) lines.push(`  ${c.ok ? 'ok  ' : 'FAIL'} ${c.check}: ${c.detail}`);
  if (r.engines.length > 0) {
    if (r.same) lines.push(`same decision (${r.engines.join(', ')})`);
    else lines.push(`decision differs (${r.engines.join(', ')}):`, ...r.differences.map((d) => `  ${d}`));
  }
  if (!r.ok) lines.push('not valid: see FAIL above');
  process.stdout.write(`${lines.join('\n')}\n`);
}

export async function replayCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { key: { type: 'string' }, url: { type: 'string' }, json: { type: 'boolean' }, 'no-opa': { type: 'boolean' } },
  });
  const target = positionals[0];
  if (!target) throw new CliUsage('usage: portcullis decision replay <receipt.json | receipt id> [--key pubkey.pem] [--url API] [--json] [--no-opa]');
  let opa: string | null;
  try {
    opa = values['no-opa'] ? null : findOpa();
  } catch (err) {
    throw new CliUsage((err as Error).message);
  }
  const api = apiBase(values.url);
  let receipt: Record<string, unknown>;
  let record: DecisionRecord | null;
  if (existsSync(target)) {
    try {
      receipt = parseStrictJson(readFileSync(target, 'utf8')) as Record<string, unknown>;
    } catch (err) {
      process.stderr.write(`portcullis: ${target} is not a receipt: ${(err as Error).message}\n`);
      return 1;
    }
    const id = (receipt['decision'] as { record?: { id?: string } } | undefined)?.record?.id;
    record = id ? ((await adminGet(`/decisions/${encodeURIComponent(id)}`, true)) as DecisionRecord | null) : null;
  } else {
    const got = await adminGet(`/decisions/receipt/${encodeURIComponent(target)}`);
    receipt = got.receipt;
    record = got.record;
  }
  let key: KeyObject;
  if (values.key) key = publicKeyFromPem(readFileSync(values.key));
  else key = publicKeyFromPem(String((await getJson(`${api}/v1/secure`)).receiptLog.publicKeyPem));
  const fetchVersion = async (document: string, sha256: string) =>
    (await getJson(`${api}/v1/secure/history/${encodeURIComponent(document)}/${encodeURIComponent(sha256)}`, {}, true)) as StoredVersion | null;
  const report = await replayReceipt(receipt, record, fetchVersion, { publicKey: key, opa });
  if (values.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else printReplay(report);
  return report.ok && report.same ? 0 : 1;
}

export async function decisionCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'replay') return replayCommand(rest);
  throw new CliUsage(`unknown command: decision ${sub ?? ''}`.trim());
}
