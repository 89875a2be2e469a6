/**
 * `x-should-retry: false` on refusals a retry cannot fix, so the OpenAI SDKs raise at once instead of
 * sending the same refused call twice more; and no such header where a retry may succeed.
 */
import { expect } from 'chai';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

describe('x-should-retry', function () {
  this.timeout(60_000);
  let gw: TestGateway;
  let token: string;
  before(async () => {
    gw = await startTestGateway();
    token = (await gw.principal()).token;
  });
  after(() => gw.close());

  const chat = (model: string) => ({ model, max_tokens: 64, messages: [{ role: 'user', content: 'x' }] });

  it('is false on 503 route-not-configured, 403 verification-required, 401 and 400, and absent on success', async () => {
    const unrouted = await gw.chat(token, chat('red-whitehacker-b'));
    expect(unrouted.status).to.equal(503);
    expect(unrouted.body.error.code).to.equal('route-not-configured');
    expect(unrouted.headers.get('x-should-retry')).to.equal('false');
    const unverified = await gw.chat(token, chat('red-whitehacker-a'));
    expect(unverified.body.error.code).to.equal('verification-required');
    expect(unverified.headers.get('x-should-retry')).to.equal('false');
    expect((await gw.chat('pcl_pat_nope', chat('shared-general-a'))).headers.get('x-should-retry')).to.equal('false');
    expect((await gw.chat(token, { model: 'shared-general-a' })).headers.get('x-should-retry')).to.equal('false');
    const ok = await gw.chat(token, chat('shared-general-a'));
    expect(ok.status).to.equal(200);
    expect(ok.headers.get('x-should-retry')).to.equal(null);
  });

  it('the OpenAI SDK, with its default retries, sends a route-not-configured call once', async () => {
    let sent = 0;
    const client = new OpenAI({
      baseURL: `${gw.apiUrl}/v1`,
      apiKey: token,
      maxRetries: 2,
      fetch: (input, init) => {
        sent++;
        return fetch(input, init);
      },
    });
    const err = await client.chat.completions.create(chat('red-whitehacker-b') as never).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).to.equal(503);
    expect(sent).to.equal(1);
  });
});
