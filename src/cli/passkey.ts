/**
 * `portcullis passkey sign-in --key FILE [--username NAME] [--auth-url URL] [--totp CODE]`: a person with a
 * terminal and no browser signs in with a software passkey (soft-authenticator.ts). The first run registers
 * a new passkey — creating a new account — and keeps it in FILE (mode 0600: it holds the private key);
 * later runs sign in with it. Prints the session cookie (`name=value`) on stdout for curl's `-H "Cookie: …"`,
 * and what it did on stderr. With TOTP enrolled, `--totp` gives the code the sign-in then needs.
 *
 * The auth host is --auth-url, else PORTCULLIS_AUTH_URL, else http://localhost:8081; the ceremony runs on
 * its origin, as a sign-in page there would.
 */
import { accessSync, closeSync, constants, existsSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { SoftAuthenticator, type SoftAuthenticatorState } from './soft-authenticator.js';

class CliError extends Error {}

interface Reply {
  status: number;
  body: Record<string, any>;
  cookie: string | null;
}

async function post(url: string, origin: string, body: unknown, cookie: string | null): Promise<Reply> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin, ...(cookie ? { cookie } : {}) },
      body: JSON.stringify(body),
    });
  } catch {
    throw new CliError(`cannot reach ${url} (is the gateway running?)`);
  }
  const json = (await res.json().catch(() => ({}))) as Record<string, any>;
  if (!res.ok) throw new CliError(`${new URL(url).pathname}: ${json['error']?.code ?? res.status}: ${json['error']?.message ?? 'failed'}`);
  const set =
    res.headers
      .getSetCookie()
      .map((c) => c.split(';')[0]!)
      .find((c) => /=pcl_ses_/.test(c)) ?? null;
  return { status: res.status, body: json, cookie: set };
}

function why(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  return code === 'EACCES' || code === 'EPERM'
    ? 'permission denied'
    : code === 'ENOENT'
      ? 'its folder does not exist'
      : code === 'EISDIR'
        ? 'it is a folder'
        : (e as Error).message;
}

/** Makes the passkey file before anything is registered, or says in one line why it cannot. */
function create(path: string): number {
  try {
    return openSync(path, 'wx', 0o600);
  } catch (e) {
    throw new CliError(`cannot write the passkey file ${path}: ${why(e)}; no account was created`);
  }
}

function writable(path: string): void {
  try {
    accessSync(path, constants.R_OK | constants.W_OK);
  } catch (e) {
    throw new CliError(`cannot read and write the passkey file ${path}: ${why(e)}`);
  }
}

function load(path: string): SoftAuthenticatorState {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as SoftAuthenticatorState;
  } catch (e) {
    throw new CliError(`cannot read the passkey file ${path}: ${e instanceof SyntaxError ? 'it is not a passkey file this command wrote' : why(e)}`);
  }
}

export async function passkeyCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { key: { type: 'string' }, username: { type: 'string' }, 'auth-url': { type: 'string' }, totp: { type: 'string' } },
  });
  const err = (m: string) => void process.stderr.write(`portcullis: ${m}\n`);
  if (positionals[0] !== 'sign-in' || !values.key) {
    err('usage: portcullis passkey sign-in --key FILE [--username NAME] [--auth-url URL] [--totp CODE]');
    return 2;
  }
  const base = (values['auth-url'] ?? process.env['PORTCULLIS_AUTH_URL'] ?? 'http://localhost:8081').replace(/\/+$/, '');
  const origin = new URL(base).origin;
  try {
    let cookie: string | null;
    let who: Record<string, any>;
    if (existsSync(values.key)) {
      // The signature counter is written back after the sign-in: a file that cannot be written is said first.
      writable(values.key);
      const a = new SoftAuthenticator(load(values.key));
      const options = await post(`${base}/v1/passkey/login/options`, origin, {}, null);
      const verify = await post(`${base}/v1/passkey/login/verify`, origin, a.get(options.body as never, origin), null);
      writeFileSync(values.key, JSON.stringify(a.toJSON(), null, 2), { mode: 0o600 }); // the counter moved
      ({ cookie, body: who } = verify);
      err(`signed in as ${who['principalId']} (${who['username']})`);
    } else {
      // The file is made (empty, mode 0600) before the account: were it made after, an unwritable path would
      // leave an account whose only private key was lost.
      const fd = create(values.key);
      let saved = false;
      try {
        const a = new SoftAuthenticator();
        const options = await post(`${base}/v1/passkey/register/options`, origin, values.username ? { username: values.username } : {}, null);
        const verify = await post(`${base}/v1/passkey/register/verify`, origin, a.create(options.body as never, origin), null);
        writeFileSync(fd, JSON.stringify(a.toJSON(), null, 2));
        saved = true;
        ({ cookie, body: who } = verify);
      } finally {
        closeSync(fd);
        if (!saved) rmSync(values.key, { force: true });
      }
      err(`created account ${who['principalId']} (${who['username']}); its passkey is in ${values.key} — keep it private`);
    }
    if (!cookie) throw new CliError('the gateway set no session cookie');
    if (who['secondFactor'] === 'totp') {
      if (!values.totp) throw new CliError('this account has TOTP enrolled: run again with --totp <code>');
      await post(`${base}/v1/totp/verify`, origin, { code: values.totp }, cookie);
    }
    process.stdout.write(`${cookie}\n`);
    return 0;
  } catch (e) {
    if (e instanceof CliError) {
      err(e.message);
      return 1;
    }
    throw e;
  }
}
