/**
 * The program of one encoder worker thread, as source text run with `eval: true`: it loads the engine and
 * the weights once, then embeds the texts of each job it is sent and posts the vectors back (their buffers
 * transferred, not copied). Plain CommonJS on purpose: a worker started from a file would need the
 * TypeScript loader in the thread when the gateway runs from source (tests, tsx), and Node 20 does not
 * carry `--import` loaders into workers reliably; this text needs nothing but Node.
 */
export const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const engine = require(workerData.addon);
const handle = engine.load(workerData.weights);
parentPort.on('message', (job) => {
  try {
    const vectors = job.texts.map((t) => engine.embed(handle, t));
    parentPort.postMessage({ id: job.id, vectors }, vectors.map((v) => v.buffer));
  } catch (err) {
    parentPort.postMessage({ id: job.id, error: String(err && err.message) });
  }
});
parentPort.postMessage({ ready: true });
`;
