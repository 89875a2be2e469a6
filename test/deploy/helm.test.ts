/**
 * The Helm chart (deploy/helm/portcullis): `helm lint`, what `helm template` renders (a Deployment with
 * probes, workers, a grace period above the drain and shutdown grace, a preStop drain; one Service per
 * public host and none for admin; a NetworkPolicy without the admin port; a PodDisruptionBudget; the
 * configuration as ConfigMaps whose change rolls the pods; secrets only by reference), and the rendered
 * Deployment and ConfigMaps played for real with `podman kube play` against a Redis on the host: two
 * replicas, a chat call through each, a revocation on one seen by the other, and a rolling restart behind
 * a readiness-following balancer without a failed call.
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { freePort } from '../helpers/ports.js';
import { gatewayImage, HELM, podman, ready, run } from './podman.js';

const CHART = 'deploy/helm/portcullis';

interface Doc {
  kind: string;
  metadata: { name: string; annotations?: Record<string, string> };
  spec: Record<string, any>;
  data?: Record<string, string>;
}

async function render(args: string[] = []): Promise<Doc[]> {
  const { stdout } = await run(HELM, ['template', 'gw', CHART, '--set', 'redis.url=redis://redis.example:6379', ...args]);
  return parseAllDocuments(stdout)
    .map((d) => d.toJS() as Doc | null)
    .filter((d): d is Doc => d !== null);
}

describe('deploy: the Helm chart', function () {
  this.timeout(30 * 60_000);

  it('passes helm lint', async () => {
    const { stdout } = await run(HELM, ['lint', CHART, '--strict']);
    expect(stdout).to.contain('0 chart(s) failed');
  });

  it('renders the Deployment: replicas, workers, probes, preStop drain, grace above the drain and shutdown grace', async () => {
    const docs = await render(['--set', 'config.gateway.shutdown.drainDelayMs=2000', '--set', 'shutdown.graceMs=40000']);
    const deployment = docs.find((d) => d.kind === 'Deployment')!;
    expect(deployment.spec['replicas']).to.equal(2);
    const pod = deployment.spec['template'].spec;
    const container = pod.containers[0];
    const env = Object.fromEntries((container.env as Array<{ name: string; value: string }>).map((e) => [e.name, e.value]));
    expect(env).to.include({ PORTCULLIS_WORKERS: 'auto', REDIS_URL: 'redis://redis.example:6379', PORTCULLIS_API_HOST: '0.0.0.0' });
    expect(env).to.not.have.property('PORTCULLIS_ADMIN_HOST');
    expect(container.readinessProbe.httpGet.path).to.equal('/readyz');
    expect(container.livenessProbe.httpGet.path).to.equal('/healthz');
    expect(container.lifecycle.preStop.exec.command).to.deep.equal(['sleep', '5']);
    // 5 s preStop + 2 s drain + 40 s grace, and a margin.
    expect(pod.terminationGracePeriodSeconds).to.be.greaterThan(5 + 2 + 40);
    expect(container.securityContext.readOnlyRootFilesystem).to.equal(true);
    expect(container.resources.requests).to.have.keys('cpu', 'memory');
    const config = docs.find((d) => d.kind === 'ConfigMap' && d.metadata.name.endsWith('-config'))!;
    expect(config.data!['gateway.yaml']).to.match(/drainDelayMs: 2000\n\s+graceMs: 40000/);
  });

  it('renders one Service per public host and none for admin, a NetworkPolicy without the admin port, a PodDisruptionBudget', async () => {
    const docs = await render();
    const services = docs.filter((d) => d.kind === 'Service');
    expect(services.map((s) => s.metadata.name).sort()).to.deep.equal([
      'gw-portcullis-api',
      'gw-portcullis-auth',
      'gw-portcullis-console',
      'gw-portcullis-graph',
      'gw-portcullis-site',
    ]);
    const ports = services.flatMap((s) => (s.spec['ports'] as Array<{ port: number }>).map((p) => p.port));
    expect(ports).to.not.include(8090);
    const policy = docs.find((d) => d.kind === 'NetworkPolicy')!;
    const allowed = (policy.spec['ingress'] as Array<{ ports: Array<{ port: number }> }>).flatMap((i) => i.ports.map((p) => p.port));
    expect(allowed.sort()).to.deep.equal([8080, 8081, 8082, 8083, 8084]);
    expect(docs.find((d) => d.kind === 'PodDisruptionBudget')!.spec['minAvailable']).to.equal(1);
    // Secrets only by reference: the chart renders none, and names the operator's.
    expect(docs.filter((d) => d.kind === 'Secret')).to.deep.equal([]);
    const withSecret = await render(['--set', 'secrets.existingSecret=portcullis-keys']);
    const container = withSecret.find((d) => d.kind === 'Deployment')!.spec['template'].spec.containers[0];
    expect(container.envFrom).to.deep.equal([{ secretRef: { name: 'portcullis-keys' } }]);
  });

  it('rolls the pods when the configuration changes (a checksum of the ConfigMaps on the pod template)', async () => {
    const checksum = async (args: string[]) =>
      (await render(args)).find((d) => d.kind === 'Deployment')!.spec['template'].metadata.annotations['checksum/config'] as string;
    const base = await checksum([]);
    expect(await checksum([])).to.equal(base);
    expect(await checksum(['--set', 'config.gateway.rateLimits.perPrincipal=100'])).to.not.equal(base);
    expect(await checksum(['--set-string', 'config.files.catalog/billing\\.yaml=version: "1"'])).to.not.equal(base);
    // A Redis Cluster by its node list.
    const cluster = await render(['--set', 'redis.url=', '--set', 'redis.clusterNodes={r1:6379,r2:6379}']);
    const env = cluster.find((d) => d.kind === 'Deployment')!.spec['template'].spec.containers[0].env as Array<{ name: string; value: string }>;
    expect(env).to.deep.include({ name: 'REDIS_CLUSTER_NODES', value: 'r1:6379,r2:6379' });
  });
});

/** A redis-server on the host that the pods (on podman's bridge) reach: every interface, a password. */
async function hostRedis(): Promise<{ port: number; password: string; stop: () => void }> {
  const port = await freePort('0.0.0.0');
  const password = randomBytes(16).toString('hex');
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-helm-redis-'));
  const child: ChildProcess = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '0.0.0.0',
      '--requirepass',
      password,
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
      '--daemonize',
      'no',
    ],
    { stdio: 'ignore' },
  );
  const stop = () => {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', stop);
  for (let i = 0; ; i += 1) {
    const pong = await run('redis-cli', ['-p', String(port), '--no-auth-warning', '-a', password, 'ping']).then(
      (r) => r.stdout.trim(),
      () => '',
    );
    if (pong === 'PONG') break;
    if (i > 100 || child.exitCode !== null) throw new Error('the host redis-server did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  return { port, password, stop };
}

describe('deploy: the Helm chart played with podman kube play', function () {
  this.timeout(30 * 60_000);
  const SECRET = 'portcullis-test-keys';
  const adminToken = `pcl_admin_${randomBytes(24).toString('base64url')}`;
  let redis: Awaited<ReturnType<typeof hostRedis>> | undefined;
  let manifest = '';
  let pods: string[] = [];
  let grace = 0;
  const api = new Map<string, string>();

  const admin = async (pod: string, args: string[]) => (await podman(['exec', `${pod}-gateway`, 'node', 'bin/portcullis.js', 'admin', ...args])).stdout.trim();
  const podUrl = async (pod: string) => {
    const infra = (await podman(['pod', 'inspect', pod, '-f', '{{.InfraContainerID}}'])).stdout.trim();
    const ip = (await podman(['inspect', infra, '-f', '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}'])).stdout.trim();
    expect(ip, `the address of ${pod}`).to.match(/^\d+\.\d+\.\d+\.\d+$/);
    return `http://${ip}:8080`;
  };
  const waitReady = async (pod: string) => {
    const url = await podUrl(pod);
    await ready(`${url}/readyz`, 180_000, async () => {
      const state = (await podman(['inspect', '-f', '{{.State.Status}}', `${pod}-gateway`])).stdout.trim();
      // Exited for good (a crash, a bad configuration): say why now rather than at the timeout.
      if (state === 'exited' || state === 'stopped') {
        const log = await podman(['logs', `${pod}-gateway`]).then(
          (r) => r.stdout + r.stderr,
          () => '',
        );
        throw new Error(`${pod} is ${state}:\n${log.slice(-3000)}`);
      }
    });
    api.set(pod, url);
  };
  const chat = (url: string, pat: string) =>
    fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${pat}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'shared-general-a', max_tokens: 32, messages: [{ role: 'user', content: 'hello' }] }),
    });
  const DEMO = 'did:web:portcullis.localhost:tenant:demo';

  before(async () => {
    const image = await gatewayImage();
    redis = await hostRedis();
    // The pods reach the host at the gateway address of the network kube play puts them on (podman makes
    // it on first use; made here first so that its address is known for the Secret).
    const net = 'podman-default-kube-network';
    if (
      !(await podman(['network', 'exists', net]).then(
        () => true,
        () => false,
      ))
    )
      await podman(['network', 'create', net]);
    const gatewayIp = (await podman(['network', 'inspect', net, '-f', '{{range .Subnets}}{{.Gateway}}{{end}}'])).stdout.trim();
    expect(gatewayIp).to.match(/^\d+\.\d+\.\d+\.\d+$/);
    const { privateKey } = await import('node:crypto').then((c) => c.generateKeyPairSync('ed25519'));
    // The Secret the chart refers to. podman 4.3's kube play reads a referenced secret as a JSON map of
    // base64 values (and cannot take a Secret document itself), so it is created with `podman secret`.
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const secretFile = join(mkdtempSync(join(tmpdir(), 'portcullis-helm-')), 'secret.json');
    writeFileSync(
      secretFile,
      JSON.stringify({
        REDIS_URL: b64(`redis://:${redis.password}@${gatewayIp}:${redis.port}`),
        PORTCULLIS_ADMIN_TOKEN: b64(adminToken),
        PORTCULLIS_RECEIPT_KEY: b64(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()),
      }),
    );
    await podman(['secret', 'rm', SECRET]).catch(() => undefined);
    await podman(['secret', 'create', SECRET, secretFile]);
    const [repository, tag] = image.split(':');
    const docs = await render([
      '--set',
      'redis.url=',
      '--set',
      `secrets.existingSecret=${SECRET}`,
      '--set',
      `image.repository=${repository}`,
      '--set',
      `image.tag=${tag}`,
      '--set',
      'image.pullPolicy=Never',
      // The gateway keeps answering (not ready) for 5 s after SIGTERM, so a balancer that follows
      // readiness has left it before it stops accepting; podman runs no preStop hook.
      '--set',
      'config.gateway.shutdown.drainDelayMs=5000',
      '--set',
      'shutdown.graceMs=10000',
      // The restart's caller sends calls back to back, well past the per-minute limits of one principal.
      '--set',
      'config.gateway.rateLimits.perPrincipal=1000000',
      '--set',
      'config.gateway.rateLimits.perAddress=1000000',
    ]);
    // What podman plays: the Deployment and its ConfigMaps (Services, policies and budgets are the cluster's).
    const played = docs.filter((d) => d.kind === 'Deployment' || d.kind === 'ConfigMap');
    grace = played.find((d) => d.kind === 'Deployment')!.spec['template'].spec.terminationGracePeriodSeconds as number;
    // podman kube play publishes every containerPort on the host (Kubernetes does not), which two replicas
    // on one host cannot share: the played pods keep their ports on their own addresses only.
    for (const c of played.find((d) => d.kind === 'Deployment')!.spec['template'].spec.containers) delete c.ports;
    expect(played.map((d) => d.kind).sort()).to.deep.equal(['ConfigMap', 'ConfigMap', 'ConfigMap', 'Deployment']);
    manifest = join(tmpdir(), `portcullis-helm-${process.pid}.yaml`);
    const { stringify } = await import('yaml');
    writeFileSync(manifest, played.map((d) => stringify(d)).join('---\n'));
    await podman(['kube', 'down', manifest]).catch(() => undefined);
    await podman(['kube', 'play', manifest]);
    pods = (await podman(['pod', 'ps', '--filter', 'name=gw-portcullis-pod', '--format', '{{.Name}}'])).stdout.trim().split('\n').sort();
    for (const pod of pods) await waitReady(pod);
  });

  after(async () => {
    if (manifest) await podman(['kube', 'down', manifest]).catch(() => undefined);
    for (const name of ['gw-portcullis-config', 'gw-portcullis-catalog', 'gw-portcullis-rules'])
      await podman(['volume', 'rm', '-f', name]).catch(() => undefined);
    await podman(['secret', 'rm', SECRET]).catch(() => undefined);
    redis?.stop();
  });

  it('runs two replicas sharing one Redis: a token issued on one answers a chat call through each', async () => {
    expect(pods).to.have.length(2);
    const pat = await admin(pods[0]!, ['token', 'issue', DEMO, '--label', 'through-each']);
    for (const pod of pods) {
      const res = await chat(api.get(pod)!, pat);
      expect(res.status, `${pod}: ${await res.clone().text()}`).to.equal(200);
    }
  });

  it('a token revoked through one replica is refused by the other', async () => {
    const pat = await admin(pods[0]!, ['token', 'issue', DEMO, '--label', 'revoked']);
    expect((await chat(api.get(pods[1]!)!, pat)).status).to.equal(200);
    const id = (await admin(pods[1]!, ['token', 'list', DEMO]))
      .split('\n')
      .find((l) => l.endsWith('\trevoked'))!
      .split('\t')[0]!;
    await admin(pods[0]!, ['token', 'revoke', id]);
    const refused = await chat(api.get(pods[1]!)!, pat);
    expect(refused.status).to.equal(401);
  });

  it('restarts replica by replica behind a readiness-following balancer without a failed call', async () => {
    const pat = await admin(pods[0]!, ['token', 'issue', DEMO, '--label', 'rolling']);
    // The balancer: sends each call to the next replica in service, as a Service does: a replica leaves after
    // two failed /readyz probes in a row (Kubernetes' failureThreshold) and returns after one success.
    const readyNow = new Map<string, boolean>(pods.map((p) => [p, true]));
    const failedProbes = new Map<string, number>(pods.map((p) => [p, 0]));
    let probing = true;
    const prober = (async () => {
      while (probing) {
        await Promise.all(
          pods.map(async (pod) => {
            const url = api.get(pod);
            const ok = url
              ? await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) }).then(
                  (r) => r.status === 200,
                  () => false,
                )
              : false;
            failedProbes.set(pod, ok ? 0 : failedProbes.get(pod)! + 1);
            if (ok) readyNow.set(pod, true);
            else if (!url || failedProbes.get(pod)! >= 2) readyNow.set(pod, false);
          }),
        );
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const failures: string[] = [];
    const served = new Map<string, number>();
    let calling = true;
    let turn = 0;
    const caller = (async () => {
      while (calling) {
        const candidates = pods.filter((p) => readyNow.get(p) && api.get(p));
        if (candidates.length === 0) {
          failures.push('no replica was ready');
          await new Promise((r) => setTimeout(r, 100));
          continue;
        }
        const pod = candidates[turn++ % candidates.length]!;
        const url = api.get(pod)!;
        try {
          const res = await chat(url, pat);
          if (res.status !== 200) failures.push(`${pod}: ${res.status} ${await res.text()}`);
          else served.set(pod, (served.get(pod) ?? 0) + 1);
        } catch (err) {
          const cause = (err as { cause?: { code?: string; message?: string } }).cause;
          failures.push(`${pod} ${url}: ${(err as Error).message} (${cause?.code ?? cause?.message ?? 'no cause'})`);
        }
      }
    })();
    try {
      for (const pod of pods) {
        const before = served.get(pod) ?? 0;
        // The gateway container is stopped (SIGTERM, then its drain) and started again inside its pod. Not
        // `podman pod stop`: that stops the pod's network with it at once, where Kubernetes keeps a
        // terminating pod's network until its containers have exited.
        await podman(['stop', '-t', String(grace), `${pod}-gateway`]);
        await podman(['start', `${pod}-gateway`]);
        await waitReady(pod);
        // Wait until the restarted replica has served calls again before restarting the next one.
        const deadline = Date.now() + 60_000;
        while ((served.get(pod) ?? 0) <= before + 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
        expect(served.get(pod) ?? 0, `${pod} served no call after its restart`).to.be.greaterThan(before + 2);
      }
    } finally {
      calling = false;
      await caller;
      probing = false;
      await prober;
    }
    // Each distinct failure once, with how often it happened.
    const distinct = [...failures.reduce((m, f) => m.set(f, (m.get(f) ?? 0) + 1), new Map<string, number>())].map(([f, n]) => `${n} x ${f}`);
    expect(distinct).to.deep.equal([]);
    for (const pod of pods) expect(served.get(pod) ?? 0).to.be.greaterThan(0);
  });
});
