/**
 * The official Java and Go clients, unchanged, against a live gateway (recording upstream, real Redis):
 * openai-java (test/clients/java/Clients.java, pinned in its pom.xml) and openai-go
 * (test/clients/go/main.go, pinned in its go.mod), built once by scripts/setup.sh. Each makes a plain call
 * and a streamed call with usage, the stream read through the SDK's own ChatCompletionAccumulator, and
 * prints what text and token counts it reported. Both accumulators are strict about OpenAI's usage rule:
 * openai-java takes the first chunk with usage for the last (and could not stream at all when the finish
 * chunk carried usage), openai-go adds usage up across chunks (and counted every token twice). So each
 * count must equal the upstream's usage, 11 prompt and 7 completion tokens.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startWorld, type World } from '../helpers/world.js';
import { builtClient } from '../helpers/built-client.js';

type Result = { text: string; usage: { prompt: number; completion: number; total: number } | null };
const UPSTREAM = { prompt: 11, completion: 7, total: 18 };

describe('clients (Java, Go): openai-java, openai-go against a live gateway', function () {
  this.timeout(120_000);
  let w: World;
  let token: string;
  let n = 0;

  before(async () => {
    w = await startWorld();
    token = (await w.gw.principal()).token;
  });
  after(() => w.stop());

  const run = async (program: string, args: string[]): Promise<Record<string, Result>> => {
    const { stdout } = await promisify(execFile)(program, [...args, `prompt ${n++} ${Date.now()}`], {
      env: { ...process.env, PORTCULLIS_BASE_URL: `${w.gw.apiUrl}/v1`, PORTCULLIS_TOKEN: token },
      timeout: 100_000,
    });
    return JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, Result>;
  };

  it("openai-java: plain call and streams (with and without usage) through ChatCompletionAccumulator, counts equal the upstream's", async () => {
    const dir = builtClient('openai-java', ['test/clients/java/pom.xml', 'test/clients/java/Clients.java']);
    const r = await run('java', ['-cp', `${join(dir, 'classes')}:${join(dir, 'lib', '*')}`, 'Clients']);
    expect(r['plain']!.text).to.match(/^recorded answer/);
    expect(r['plain']!.usage).to.deep.equal(UPSTREAM);
    expect(r['stream']!.text).to.match(/^recorded answer/);
    expect(r['stream']!.usage).to.deep.equal(UPSTREAM);
    expect(r['streamNoUsage']!.text).to.match(/^recorded answer/);
    expect(r['streamNoUsage']!.usage).to.equal(null);
  });

  it("openai-go: plain call and a stream with usage through ChatCompletionAccumulator, counts equal the upstream's", async () => {
    const dir = builtClient('openai-go', ['test/clients/go/go.mod', 'test/clients/go/go.sum', 'test/clients/go/main.go']);
    const r = await run(join(dir, 'client'), []);
    expect(r['plain']!.text).to.match(/^recorded answer/);
    expect(r['plain']!.usage).to.deep.equal(UPSTREAM);
    expect(r['stream']!.text).to.match(/^recorded answer/);
    expect(r['stream']!.usage).to.deep.equal(UPSTREAM);
  });
});
