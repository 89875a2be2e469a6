/** What both MCP servers say about themselves in `initialize`. */
import { createRequire } from 'node:module';

const pkg = createRequire(import.meta.url)('../../package.json') as { version: string };

export const SERVER_INFO = { name: 'portcullis', version: pkg.version };
