/** The call type, at the path some tests import it from; it lives in src/call/call.ts. */
export type { Call } from '../call/call.js';
