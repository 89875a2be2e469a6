/**
 * `portcullis recovery ...`: the person's side of account recovery from a terminal (docs/sign-in.md). The
 * phrase is read from PORTCULLIS_RECOVERY_PHRASE or, when unset, from stdin — never from the command
 * line, where other users of the machine could read it — and never leaves this process: only the public
 * key derived from it and signatures are sent.
 *
 *   portcullis recovery new-phrase                                  prints a new 12-word phrase
 *   portcullis recovery setup --cookie COOKIE                       registers the phrase's key; prints the
 *                                                                   one-time secret (write it down)
 *   portcullis recovery start --secret SECRET                       starts a recovery; prints when it completes
 *   portcullis recovery complete                                    after the delay: prints a session cookie
 * Each takes --auth-url (default PORTCULLIS_AUTH_URL, else http://localhost:8081).
 */
import { parseArgs } from 'node:util';
import { isPhrase, newPhrase, recoveryKey, recoveryMessage } from '../recovery/phrase.js';

class CliError extends Error {}

async function readPhrase(): Promise<string> {
  const fromEnv = process.env['PORTCULLIS_RECOVERY_PHRASE'];
  let phrase = fromEnv;
  if (!phrase) {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(c as Buffer);
    phrase = Buffer.concat(chunks).toString('utf8');
  }
  if (!isPhrase(phrase)) throw new CliError('that is not a recovery phrase (12 words from `portcullis recovery new-phrase`)');
  return phrase;
}

async function post(base: string, path: string, body: unknown, cookie?: string): Promise<{ body: Record<string, any>; cookie: string | null }> {
  let res: Response;
  try {
    res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: new URL(base).origin, ...(cookie ? { cookie } : {}) },
      body: JSON.stringify(body),
    });
  } catch {
    throw new CliError(`cannot reach ${base} (is the gateway running?)`);
  }
  const json = (await res.json().catch(() => ({}))) as Record<string, any>;
  if (!res.ok) throw new CliError(`${path}: ${json['error']?.code ?? res.status}: ${json['error']?.message ?? 'failed'}`);
  const set =
    res.headers
      .getSetCookie()
      .map((c) => c.split(';')[0]!)
      .find((c) => /=pcl_ses_/.test(c)) ?? null;
  return { body: json, cookie: set };
}

/** A fresh challenge of the server, signed by the phrase's key. */
async function proof(base: string, phrase: string) {
  const { body } = await post(base, '/v1/recovery/challenge', {});
  const key = recoveryKey(phrase);
  return { publicKey: key.publicKey, challenge: body['challenge'] as string, signature: key.sign(recoveryMessage(new URL(base).origin, body['challenge'])) };
}

export async function recoveryCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { cookie: { type: 'string' }, secret: { type: 'string' }, 'auth-url': { type: 'string' } },
  });
  const base = (values['auth-url'] ?? process.env['PORTCULLIS_AUTH_URL'] ?? 'http://localhost:8081').replace(/\/+$/, '');
  const out = (s: string) => void process.stdout.write(`${s}\n`);
  const say = (s: string) => void process.stderr.write(`${s}\n`);
  try {
    switch (positionals[0]) {
      case 'new-phrase':
        say('write these 12 words down and keep them offline; portcullis never sees them:');
        out(newPhrase());
        return 0;
      case 'setup': {
        if (!values.cookie) throw new CliError('setup needs --cookie (a signed-in session, from `portcullis passkey sign-in`)');
        const phrase = await readPhrase();
        const { body } = await post(base, '/v1/recovery/setup', { publicKey: recoveryKey(phrase).publicKey }, values.cookie);
        say('recovery is set up. Write this one-time secret down and keep it apart from the phrase:');
        out(String(body['recoverySecret']));
        return 0;
      }
      case 'start': {
        if (!values.secret) throw new CliError('start needs --secret (the one-time secret from set-up)');
        const phrase = await readPhrase();
        const { body } = await post(base, '/v1/recovery/start', { ...(await proof(base, phrase)), recoverySecret: values.secret });
        say(`recovery ${body['recoveryId']} started; any sign-in of the account cancels it. Complete it after:`);
        out(String(body['completesAt']));
        return 0;
      }
      case 'complete': {
        const phrase = await readPhrase();
        const { body, cookie } = await post(base, '/v1/recovery/complete', await proof(base, phrase));
        if (!cookie) throw new CliError('the gateway set no session cookie');
        say(`recovered ${body['principalId']} (${body['username']}); register a new passkey with this session`);
        out(cookie);
        return 0;
      }
      default:
        say(
          'usage: portcullis recovery new-phrase | setup --cookie COOKIE | start --secret SECRET | complete  [--auth-url URL]\n(the phrase is read from PORTCULLIS_RECOVERY_PHRASE or stdin)',
        );
        return 2;
    }
  } catch (e) {
    if (e instanceof CliError) {
      say(`portcullis: ${e.message}`);
      return 1;
    }
    throw e;
  }
}
