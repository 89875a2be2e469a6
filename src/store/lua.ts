/**
 * The one way a capability runs Lua in Redis. Every script is a `.lua` file beside the capability that
 * owns it (`src/<capability>/lua/`), read once when its module loads and sent by SHA1 (EVALSHA); when the
 * server does not know the script (a restart, SCRIPT FLUSH, a failover to a replica that never saw it) the
 * source follows once (EVAL), never an error. The build copies the `.lua` files into dist/ beside the
 * compiled modules (scripts/copy-lua.mjs), so a script is found at the same relative path either way.
 *
 * Composition is by file, at load: a script may be preceded by library files that define Lua functions
 * (`local function ...`), e.g. the receipt write that the meter's settlement and the store's own receipt
 * write share. Nothing is composed at run time.
 *
 * Keys: a script names in KEYS every key it is given. A script that finds further keys by reading (an index
 * that lists ids, a hold that names its principal) builds them from its family's prefix, which it is given
 * as a KEYS entry too (never through ARGV): on a cluster every KEYS entry must be in one slot, so the prefix
 * (a hash tag, store/redis.ts) both routes the script and keeps every key it builds in that slot.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { ErrorReply } from '@redis/client';

export interface LuaScript {
  /** The script's own file name, for errors. */
  readonly name: string;
  readonly source: string;
  readonly sha1: string;
  /** Writes nothing: run as EVALSHA_RO, which Redis refuses to let write (and a replica may serve). */
  readonly readOnly: boolean;
}

/**
 * Reads a script: `files` relative to `base` (the caller's `import.meta.url`), libraries first and the
 * script itself last, joined into one source.
 */
export function loadLua(base: string, ...files: string[]): LuaScript {
  return load(base, files, false);
}

/** `loadLua` for a script that only reads. */
export function loadReadOnlyLua(base: string, ...files: string[]): LuaScript {
  return load(base, files, true);
}

function load(base: string, files: string[], readOnly: boolean): LuaScript {
  if (files.length === 0) throw new TypeError('a script needs at least one file');
  const source = files.map((f) => readFileSync(new URL(f, base), 'utf8')).join('\n');
  return { name: basename(files[files.length - 1]!), source, sha1: createHash('sha1').update(source).digest('hex'), readOnly };
}

/** What running a script needs of a client: node-redis' EVALSHA and EVAL (one primary or a cluster). */
export interface LuaEvaluator {
  evalSha(sha1: string, options: LuaCall): Promise<unknown>;
  eval(source: string, options: LuaCall): Promise<unknown>;
  evalShaRo(sha1: string, options: LuaCall): Promise<unknown>;
  evalRo(source: string, options: LuaCall): Promise<unknown>;
}

type LuaCall = { keys: string[]; arguments: string[] };

/**
 * Runs `script` by SHA1, sending its source only when the server answers NOSCRIPT. Not an async layer (a
 * chat call runs three scripts): the retry hangs on the command's own promise.
 */
export function evalLua(client: LuaEvaluator, script: LuaScript, keys: string[], args: string[]): Promise<unknown> {
  const call = { keys, arguments: args };
  return (script.readOnly ? client.evalShaRo(script.sha1, call) : client.evalSha(script.sha1, call)).catch((err: unknown) => {
    if (!(err instanceof ErrorReply && err.message.startsWith('NOSCRIPT'))) throw err;
    return script.readOnly ? client.evalRo(script.source, call) : client.eval(script.source, call);
  });
}

/** What one primary's client offers besides its named commands: a command sent as its words. */
export interface RawCommands {
  sendCommand(args: string[]): Promise<unknown>;
}

/**
 * `evalLua` on one primary, the command written as its words: the same EVALSHA on the wire (the source after
 * NOSCRIPT, as above). node-redis' own `evalSha` builds a command parser and wraps the same words in two
 * async layers more (about a dozen promises and 3 KiB a chat call, which runs three scripts). A cluster keeps
 * `evalLua`: its client routes the named command by its first key and replays it on a redirection.
 */
export function evalLuaRaw(client: RawCommands, script: LuaScript, keys: string[], args: string[]): Promise<unknown> {
  return client.sendCommand(scriptWords(script.readOnly ? 'EVALSHA_RO' : 'EVALSHA', script.sha1, keys, args)).catch((err: unknown) => {
    if (!(err instanceof ErrorReply && err.message.startsWith('NOSCRIPT'))) throw err;
    return client.sendCommand(scriptWords(script.readOnly ? 'EVAL_RO' : 'EVAL', script.source, keys, args));
  });
}

/**
 * `command script numkeys key... arg...`, filled by index into an array of its final length: spreading the
 * keys and arguments into a literal went through the array iterator (its result objects were 3 KiB of a
 * chat call's garbage, which runs three scripts).
 */
function scriptWords(command: string, script: string, keys: readonly string[], args: readonly string[]): string[] {
  const words = new Array<string>(3 + keys.length + args.length);
  words[0] = command;
  words[1] = script;
  words[2] = String(keys.length);
  for (let i = 0; i < keys.length; i++) words[3 + i] = keys[i]!;
  const from = 3 + keys.length;
  for (let i = 0; i < args.length; i++) words[from + i] = args[i]!;
  return words;
}
