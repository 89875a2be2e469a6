/**
 * Where `npm start` writes its log. A person at a terminal wants the banner (and its PAT) to stay on screen,
 * not scroll away under a JSON line per request; a service manager (systemd, a container runtime) wants
 * every line on stderr. So: `PORTCULLIS_LOG_FILE=<path>` appends every line to that file; `-` keeps them all
 * on stderr; unset, they go to `portcullis.log` in the data folder when stderr is a terminal (warnings and
 * errors are shown there too), and to stderr otherwise, as before.
 */
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { dataDir } from './index.js';

type Env = Record<string, string | undefined>;

export interface LogTarget {
  /** The file every line goes to, or null for stderr. */
  readonly file: string | null;
  /** For the logger: writes one line (null when lines go to stderr). */
  readonly write: ((line: string) => void) | null;
}

export function logTarget(root: string, env: Env, stderrIsTerminal: boolean): LogTarget {
  const chosen = env['PORTCULLIS_LOG_FILE'];
  if (chosen === '-' || (!chosen && !stderrIsTerminal)) return { file: null, write: null };
  const file = chosen ? resolve(chosen) : join(dataDir(root, env), 'portcullis.log');
  mkdirSync(dirname(file), { recursive: true });
  const fd = openSync(file, 'a', 0o600);
  process.on('exit', () => closeSync(fd));
  const echo = !chosen; // the terminal still sees what needs a person's attention
  return {
    file,
    write(line: string) {
      const text = line.endsWith('\n') ? line : `${line}\n`;
      writeSync(fd, text);
      if (echo && /"level":"(warn|error)"/.test(text)) process.stderr.write(text);
    },
  };
}
