/**
 * The `portcullis` command. `check` validates the configuration offline; `admin ...` speaks to the admin
 * API of a running gateway, found through PORTCULLIS_ADMIN_URL (or PORTCULLIS_ADMIN_PORT on loopback) with
 * the operator token in PORTCULLIS_ADMIN_TOKEN. Output is made for scripts: `token issue` prints the token
 * alone, `token list` one token a line (id, a tab, label); errors go to stderr with a non-zero exit.
 */
import { newDataKey } from '../data-key/keyring.js';
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { loadConfig } from '../config/load.js';
import { referencedSecrets, withStandIns } from '../config/secrets-referenced.js';
import { compileRuntime } from '../config/compile.js';
import { operatorsFrom } from '../app/operators.js';
import { ConfigError } from '../config/documents.js';
import { receiptCommand } from './receipt-verify.js';
import { passkeyCommand } from './passkey.js';
import { recoveryCommand } from './recovery.js';
import { CliUsage, decisionCommand } from './decision.js';
import { policyImpactCommand } from './policy-impact.js';

const USAGE = `usage:
  portcullis check [--root DIR]
  portcullis admin principal create [--tenant ID] [--username NAME]
  portcullis admin principal show <principal>
  portcullis admin principal grant <principal> --rung card|identity|business|contracted [--screening <reference>]   # business/contracted need --screening
  portcullis admin principal scope <principal> --scope <id> --tasks a,b
  portcullis admin token issue <principal> --label <label> [--legacy]
  portcullis admin token list <principal>
  portcullis admin token revoke <tokenId>
  portcullis admin token revoke-legacy
  portcullis admin reload
  portcullis admin credits grant <principal> --micro-usd <n> [--id <operationId>]
  portcullis admin plan set <principal> <plan>  [--id <operationId>]
  portcullis admin billing <principal> [--day YYYY-MM-DD]
  portcullis admin receipts <principal> [--day YYYY-MM-DD]   # one receipt (JSON) a line
  portcullis admin receipt-key                                # the public key the receipt log's checkpoints are signed with
  portcullis admin reviews [--day YYYY-MM-DD]                 # the day's flagged calls, one JSON a line
  portcullis admin applications [--status submitted|approved|refused]   # one application (JSON) a line
  portcullis admin application show <id>
  portcullis admin application approve <id> [--note TEXT]
  portcullis admin application refuse <id> --reason TEXT
  portcullis admin data-key new                                # prints a new data key (offline)
  portcullis admin data-key rewrap                             # re-seals every stored secret under the first key
  portcullis receipt verify <file> [--key pubkey.pem] [--checkpoint file] [--root DIR] [--witness vkey]... [--witnesses-required k]
  portcullis receipt audit --from <checkpoint file> --to <checkpoint file|latest> [--key pubkey.pem] [--url API] [--proof file] [--save file] [--witness vkey]... [--witnesses-required k]
  portcullis decision replay <receipt.json | receipt id> [--key pubkey.pem] [--url API] [--json] [--no-opa]
  portcullis policy impact [--candidate DIR] [--since 24h] [--until TIME] [--root DIR] [--json]
  portcullis passkey sign-in --key FILE [--username NAME] [--auth-url URL] [--totp CODE]   # prints the session cookie
  portcullis recovery new-phrase | setup --cookie COOKIE | start --secret SECRET | complete [--auth-url URL]
      (the recovery phrase is read from PORTCULLIS_RECOVERY_PHRASE or stdin)
environment: PORTCULLIS_ADMIN_URL (or PORTCULLIS_ADMIN_PORT), PORTCULLIS_ADMIN_TOKEN`;

class UsageError extends Error {}

/** One line for an applied (or already applied) grant: what it credited and the balance after. */
function grantLine(r: Record<string, unknown>): string {
  const g = r['grant'] as { operationId: string; principalId: string; microUSD: number; plan?: string };
  const ai = (r['billing'] as { balances: Array<{ availableMicroUSD: number }> }).balances[0] ?? { availableMicroUSD: 0 };
  const what = g.plan ? `plan ${g.plan} with ${g.microUSD} micro-USD of AI credits` : `${g.microUSD} micro-USD of credits`;
  const verb = r['applied'] ? 'granted' : 'already granted (nothing changed)';
  return `${verb}: ${what} to ${g.principalId}, operation ${g.operationId}; available ${ai.availableMicroUSD} micro-USD`;
}

/**
 * Validates a root offline, as start-up would, without its live secrets: each secret the configuration
 * names must be referenced where it belongs, not set on this machine (src/config/secrets-referenced.ts).
 */
async function check(root: string): Promise<number> {
  try {
    const bundle = loadConfig(root);
    const secrets = referencedSecrets(bundle);
    const env = withStandIns(process.env, secrets);
    const runtime = await compileRuntime(loadConfig(root, env), { demoBaseUrl: 'http://127.0.0.1:9/v1', env, probe: false });
    await runtime.close();
    // Where the tokens are set here: a named operator's token equal to the main one is refused as at start.
    const adminToken = process.env['PORTCULLIS_ADMIN_TOKEN'];
    if (adminToken) operatorsFrom(runtime.gateway, withStandIns(process.env, secrets), adminToken, bundle.gateway.file);
    const lines = [`configuration is valid: ${JSON.stringify(runtime.versions)}`];
    if (secrets.length > 0) lines.push('secrets it references (their values are not needed to check):');
    for (const s of secrets) lines.push(`  ${s.name}  (${s.where}; ${process.env[s.name] ? 'set here' : 'not set here'})`);
    process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

function adminUrl(): string {
  const env = process.env;
  return (env['PORTCULLIS_ADMIN_URL'] ?? `http://127.0.0.1:${env['PORTCULLIS_ADMIN_PORT'] ?? '8090'}`).replace(/\/+$/, '');
}

async function call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Record<string, unknown>> {
  const token = process.env['PORTCULLIS_ADMIN_TOKEN'];
  if (!token) throw new UsageError('PORTCULLIS_ADMIN_TOKEN is not set');
  let res: Response;
  try {
    res = await fetch(`${adminUrl()}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch {
    throw new UsageError(`cannot reach the admin API at ${adminUrl()} (is the gateway running?)`);
  }
  const json = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok) {
    const e = (json['error'] ?? {}) as { code?: string; message?: string };
    throw new UsageError(`${e.code ?? res.status}: ${e.message ?? 'request failed'}`);
  }
  return json;
}

const enc = encodeURIComponent;
const need = (v: string | undefined, what: string): string => {
  if (!v) throw new UsageError(`missing ${what}`);
  return v;
};

async function admin(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      tenant: { type: 'string' },
      username: { type: 'string' },
      rung: { type: 'string' },
      scope: { type: 'string' },
      tasks: { type: 'string' },
      label: { type: 'string' },
      legacy: { type: 'boolean' },
      'micro-usd': { type: 'string' },
      id: { type: 'string' },
      day: { type: 'string' },
      status: { type: 'string' },
      note: { type: 'string' },
      reason: { type: 'string' },
      screening: { type: 'string' },
    },
  });
  const target = positionals[2];
  const out = (s: string): void => void process.stdout.write(`${s}\n`);
  const oneWord = ['receipts', 'billing', 'receipt-key', 'reviews', 'applications'].includes(positionals[0] ?? '');
  switch (oneWord ? positionals[0] : positionals.slice(0, 2).join(' ')) {
    case 'principal create': {
      const p = await call('POST', '/principals', {
        ...(values.tenant ? { tenant: values.tenant } : {}),
        ...(values.username ? { username: values.username } : {}),
      });
      return out(String(p['id']));
    }
    case 'principal show':
      return out(JSON.stringify(await call('GET', `/principals/${enc(need(target, '<principal>'))}`), null, 2));
    case 'principal grant': {
      const p = await call('POST', `/principals/${enc(need(target, '<principal>'))}/rung`, {
        rung: need(values.rung, '--rung'),
        ...(values.screening !== undefined ? { screeningReference: values.screening } : {}),
      });
      const rung = p['rung'] as { id: string; expiresAt: string };
      return out(`${String(p['id'])} holds rung ${rung.id} until ${rung.expiresAt}`);
    }
    case 'principal scope': {
      const tasks = need(values.tasks, '--tasks')
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean);
      await call('POST', `/principals/${enc(need(target, '<principal>'))}/scopes`, { scope: need(values.scope, '--scope'), tasks });
      return out(`scope ${values.scope} approved with ${tasks.join(', ')}`);
    }
    case 'token issue': {
      const t = await call('POST', `/principals/${enc(need(target, '<principal>'))}/tokens`, {
        label: need(values.label, '--label'),
        ...(values.legacy ? { format: 'v1' } : {}),
      });
      return out(String(t['token']));
    }
    case 'token list': {
      const list = await call('GET', `/principals/${enc(need(target, '<principal>'))}/tokens`);
      for (const t of list['data'] as Array<{ id: string; label: string; revokedAt: string | null }>)
        out(`${t.id}\t${t.label}${t.revokedAt ? '\t(revoked)' : ''}`);
      return;
    }
    case 'token revoke': {
      const t = await call('POST', `/tokens/${enc(need(target, '<tokenId>'))}/revoke`);
      return out(`revoked ${String(t['id'])}`);
    }
    case 'token revoke-legacy': {
      const r = await call('POST', '/tokens/revoke-legacy');
      return out(`revoked ${String(r['revoked'])} legacy token(s)`);
    }
    case 'data-key new':
      // Offline: a key is 32 random bytes; the operator puts it first in PORTCULLIS_DATA_KEY, then rewraps.
      return out(newDataKey());
    case 'data-key rewrap': {
      const r = await call('POST', '/data-key/rewrap');
      return out(
        `rewrapped ${String(r['rewrapped'])} of ${String(r['total'])} TOTP secret(s) under data key ${String(r['keyId'])}; ${String(r['unopenable'])} could not be opened`,
      );
    }
    case 'reload': {
      const r = await call('POST', '/reload');
      const restart = (r['needsRestart'] as string[] | undefined) ?? [];
      const workers = (r['workers'] as Array<{ worker: number; versions: unknown }> | undefined) ?? [];
      return out(
        [
          `reloaded: ${JSON.stringify(r['versions'])}`,
          ...(workers.length > 1 ? workers.map((w) => `  worker ${w.worker}: ${JSON.stringify(w.versions)}`) : []),
          ...(restart.length > 0 ? [`needs restart (read, not applied): ${restart.join(', ')}`] : []),
        ].join('\n'),
      );
    }
    case 'credits grant': {
      const micro = need(values['micro-usd'], '--micro-usd');
      if (!/^[1-9][0-9]*$/.test(micro)) throw new UsageError('--micro-usd must be a positive integer (1 USD = 1000000)');
      const r = await call('POST', `/principals/${enc(need(target, '<principal>'))}/credits`, {
        microUSD: Number(micro),
        ...(values.id ? { operationId: values.id } : {}),
      });
      return out(grantLine(r));
    }
    case 'plan set': {
      const r = await call('POST', `/principals/${enc(need(target, '<principal>'))}/plan`, {
        plan: need(positionals[3], '<plan>'),
        ...(values.id ? { operationId: values.id } : {}),
      });
      return out(grantLine(r));
    }
    case 'billing': {
      const day = values.day ? `?day=${enc(values.day)}` : '';
      return out(JSON.stringify(await call('GET', `/principals/${enc(need(positionals[1], '<principal>'))}/billing${day}`), null, 2));
    }
    case 'receipts': {
      const day = values.day ? `?day=${enc(values.day)}` : '';
      const list = await call('GET', `/principals/${enc(need(positionals[1], '<principal>'))}/receipts${day}`);
      for (const r of list['data'] as unknown[]) out(JSON.stringify(r));
      return;
    }
    case 'reviews': {
      // Every page of the day, oldest first: one entry (JSON) a line.
      const day = values.day ? `&day=${enc(values.day)}` : '';
      for (let offset = 0; ;) {
        const page = await call('GET', `/reviews?offset=${offset}${day}`);
        const data = page['data'] as unknown[];
        for (const r of data) out(JSON.stringify(r));
        offset += data.length;
        if (data.length === 0 || offset >= Number(page['total'])) return;
      }
    }
    case 'applications': {
      const list = await call('GET', `/applications${values.status ? `?status=${enc(values.status)}` : ''}`);
      for (const a of list['data'] as unknown[]) out(JSON.stringify(a));
      return;
    }
    case 'application show':
      return out(JSON.stringify(await call('GET', `/applications/${enc(need(target, '<id>'))}`), null, 2));
    case 'application approve': {
      const a = await call('POST', `/applications/${enc(need(target, '<id>'))}/approve`, values.note ? { note: values.note } : {});
      const scope = (a['request'] as { scope: { id: string; tasks: string[] } }).scope;
      return out(`approved ${String(a['id'])}: scope ${scope.id} with ${scope.tasks.join(', ')} for ${String(a['principalId'])}`);
    }
    case 'application refuse': {
      const a = await call('POST', `/applications/${enc(need(target, '<id>'))}/refuse`, { reason: need(values.reason, '--reason') });
      return out(`refused ${String(a['id'])}`);
    }
    case 'receipt-key': {
      const k = await call('GET', '/receipt-key');
      return void process.stdout.write(String(k['publicKeyPem']));
    }
    default:
      throw new UsageError(`unknown command: admin ${positionals.join(' ')}`);
  }
}

/**
 * The usage lines of a command: those of USAGE that start with `portcullis <words>`, dropping words from
 * the end until some match (so `admin token frobnicate --help` still shows every `admin token` line).
 */
export function usageFor(words: string[]): string {
  const lines = USAGE.split('\n').slice(1);
  for (let n = words.length; n > 0; n--) {
    const prefix = `  portcullis ${words.slice(0, n).join(' ')}`;
    const found = lines.filter((l, i) => l.startsWith(`${prefix} `) || l === prefix || (lines[i - 1]?.startsWith(prefix) && l.startsWith('      ')));
    if (found.length) return `usage:\n${found.join('\n')}${words[0] === 'admin' ? `\n${lines.at(-1)}` : ''}`;
  }
  return USAGE;
}

export async function run(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  // `--help`, `-h` or a trailing `help` anywhere, and `portcullis admin` alone: the usage of that command.
  const words = argv.filter((a) => !a.startsWith('-') && a !== 'help');
  if (argv.includes('--help') || argv.includes('-h') || (argv.length > 1 && argv.at(-1) === 'help') || (command === 'admin' && rest.length === 0)) {
    process.stdout.write(`${usageFor(words)}\n`);
    return 0;
  }
  try {
    if (command === 'check') {
      const { values } = parseArgs({ args: rest, options: { root: { type: 'string' } } });
      return await check(resolve(values.root ?? process.env['PORTCULLIS_ROOT'] ?? process.cwd()));
    }
    if (command === 'admin') {
      await admin(rest);
      return 0;
    }
    if (command === 'receipt') return await receiptCommand(rest);
    if (command === 'passkey') return await passkeyCommand(rest);
    if (command === 'recovery') return await recoveryCommand(rest);
    if (command === 'decision') return await decisionCommand(rest);
    if (command === 'policy' && rest[0] === 'impact') return await policyImpactCommand(rest.slice(1));
    if (command === undefined || command === 'help') {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    process.stderr.write(`portcullis: unknown command: ${command}\n${USAGE}\n`);
    return 2;
  } catch (err) {
    if (err instanceof UsageError || err instanceof CliUsage || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`portcullis: ${(err as Error).message}\n`);
      return 2;
    }
    throw err;
  }
}

process.exitCode = await run(process.argv.slice(2));
