/**
 * `npm run build` runs this after tsc: it indexes the evidence once and writes the serialized index beside
 * the compiled search module (dist/knowledge/search-index.json.gz), so a started gateway reads the index
 * instead of building it. The file records which evidence and which indexing code it was built from; a
 * gateway that finds it stale ignores it and builds the index itself.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Evidence } from './evidence.js';
import { INDEX_FILE, KnowledgeSearch } from './search.js';

const evidence = Evidence.load();
const bytes = KnowledgeSearch.build(evidence).serialize();
writeFileSync(INDEX_FILE, bytes);
process.stdout.write(`knowledge index: ${evidence.nodes.size} entries, ${bytes.length} bytes -> ${fileURLToPath(INDEX_FILE)}\n`);
