/**
 * The decision suites' gateway: the recording upstream and a test gateway on it (memory store, or a real
 * redis-server when asked), with `policy:` settings added to its config/gateway.yaml, and the environment
 * the `portcullis` CLI needs to reach it.
 */
import { configRoot, editFile, startTestGateway, type TestGateway, type TestGatewayOptions } from '../helpers/gateway.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';

export interface DecisionGateway {
  gw: TestGateway;
  upstream: RecordingUpstream;
  /** With `redis: true`, the redis-server the gateway stores in. */
  redis?: RedisServer;
  /** PORTCULLIS_ADMIN_URL, _ADMIN_TOKEN, _API_URL and _ROOT, for `cli()`. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export async function startDecisionGateway(
  opts: Omit<TestGatewayOptions, 'upstreamUrl' | 'redisUrl'> & {
    redis?: boolean;
    /** Settings under `policy:` in the gateway's config (on a fresh config root unless `root` is given). */
    policy?: Record<string, string | number | boolean>;
  } = {},
): Promise<DecisionGateway> {
  const { redis: withRedis, policy, ...gatewayOpts } = opts;
  const root = gatewayOpts.root ?? configRoot();
  if (policy) {
    const lines = Object.entries(policy).map(([k, v]) => `  ${k}: ${v}\n`);
    editFile(root, 'config/gateway.yaml', (t) => `${t}\npolicy:\n${lines.join('')}`);
  }
  const [upstream, redis] = await Promise.all([startRecordingUpstream(), withRedis ? startRedisServer() : undefined]);
  let gw: TestGateway;
  try {
    gw = await startTestGateway({ ...gatewayOpts, root, upstreamUrl: upstream.baseUrl, ...(redis ? { redisUrl: redis.url } : {}) });
  } catch (err) {
    await Promise.all([upstream.stop(), redis?.stop()]);
    throw err;
  }
  return {
    gw,
    upstream,
    ...(redis ? { redis } : {}),
    env: { PORTCULLIS_ADMIN_URL: gw.adminUrl, PORTCULLIS_ADMIN_TOKEN: gw.adminToken, PORTCULLIS_API_URL: gw.apiUrl, PORTCULLIS_ROOT: gw.root },
    async stop() {
      await gw.close();
      await Promise.all([upstream.stop(), redis?.stop()]);
    },
  };
}
