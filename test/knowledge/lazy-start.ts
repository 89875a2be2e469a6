/**
 * Run by lazy.test.ts in a process of its own (the knowledge is loaded once per process): starts a gateway,
 * says whether the knowledge was loaded by the start, then asks the first search and prints its answer.
 */
import { knowledgeLoaded } from '../../src/knowledge/index.js';
import { startWorld } from '../helpers/world.js';

const w = await startWorld();
try {
  const loadedAtStart = knowledgeLoaded();
  const res = await fetch(`${w.gw.apiUrl}/v1/knowledge/search?q=sql+injection&limit=5`);
  process.stdout.write(`${JSON.stringify({ loadedAtStart, status: res.status, body: await res.json(), loadedAfter: knowledgeLoaded() })}\n`);
} finally {
  await w.stop();
}
