import t, { type Test } from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, parse } from 'yaml';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { PodMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor';
import { freePort, startAnvil } from '@tollgate/devnet';
import { resolveConfig, type GatewayConfigInput } from '../core/index.js';
import { startRedisServer } from './helpers/redis-server.js';
import { until } from './helpers/until.js';

// Runs the image's command with two workers under tsx: slow on a loaded machine.
t.setTimeout(300_000);

const root = fileURLToPath(new URL('../', import.meta.url));
const kubeDir = join(root, 'deploy/kubernetes');

/** The model class of each kind the kit ships: `validate()` checks an object against the Kubernetes (or CRD) schema. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'monitoring.coreos.com/v1/PodMonitor': PodMonitor,
};

type Manifest = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string> }; [field: string]: unknown };

function manifests(): Map<string, Manifest> {
  const out = new Map<string, Manifest>();
  for (const file of readdirSync(kubeDir).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')) {
    for (const doc of parseAllDocuments(readFileSync(join(kubeDir, file), 'utf8'))) {
      if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]!.message}`);
      const manifest = doc.toJS() as Manifest;
      out.set(manifest.kind, manifest);
    }
  }
  return out;
}

// The shapes the checks below read.
interface Container {
  args: string[];
  env: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef: { name: string; key: string } } }>;
  readinessProbe: { httpGet: { path: string; port: string } };
  livenessProbe: { httpGet: { path: string; port: string } };
  lifecycle: { preStop: { exec: { command: string[] } } };
  volumeMounts: Array<{ name: string; mountPath: string }>;
  ports: Array<{ name: string; containerPort: number }>;
  resources: { limits: { cpu: string } };
}
interface PodSpec { terminationGracePeriodSeconds: number; containers: Container[]; volumes: Array<{ name: string; configMap?: { name: string } }>; securityContext: { runAsNonRoot: boolean } }

t.test('every manifest parses and validates against its Kubernetes schema', async (t) => {
  const found = manifests();
  t.same([...found.keys()].sort(), ['ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'PodDisruptionBudget', 'PodMonitor', 'Secret', 'Service']);
  for (const manifest of found.values()) {
    const Model = MODELS[`${manifest.apiVersion}/${manifest.kind}`];
    t.ok(Model, `${manifest.kind} has a model`);
    t.doesNotThrow(() => new Model!(manifest as never).validate(), `${manifest.kind} is valid`);
  }
  // The validation is real: a wrong field type is refused.
  const broken = structuredClone(found.get('Deployment')!) as unknown as { spec: { template: { spec: PodSpec } } };
  (broken.spec.template.spec.containers[0]!.ports[0] as { containerPort: unknown }).containerPort = 'http';
  t.throws(() => new Deployment(broken as never).validate(), /containerPort must be integer/);
  const kustomization = parse(readFileSync(join(kubeDir, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
  t.same(kustomization.resources.sort(), readdirSync(kubeDir).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml').sort(), 'kustomization lists every manifest');
});

t.test('the Deployment probes, drains, mounts its config and secrets, and the others point at it', async (t) => {
  const found = manifests();
  const deployment = found.get('Deployment')! as Manifest & { spec: { selector: { matchLabels: Record<string, string> }; template: { metadata: { labels: Record<string, string> }; spec: PodSpec } } };
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0]!;
  t.equal(container.readinessProbe.httpGet.path, '/readyz');
  t.equal(container.livenessProbe.httpGet.path, '/healthz');
  t.same(container.lifecycle.preStop.exec.command.slice(0, 1), ['sleep'], 'preStop pauses while endpoints stop sending');
  t.ok(pod.securityContext.runAsNonRoot, 'non-root');
  const configMap = found.get('ConfigMap')! as Manifest & { data: Record<string, string> };
  const config = parse(configMap.data['gateway.yaml']!) as GatewayConfigInput & { server: { drainTimeoutMs: number } };
  t.doesNotThrow(() => resolveConfig(config), 'the mounted gateway.yaml is a valid configuration');
  const preStopMs = Number(container.lifecycle.preStop.exec.command[1]) * 1000;
  t.ok(pod.terminationGracePeriodSeconds * 1000 > preStopMs + config.server.drainTimeoutMs, 'the grace period covers the preStop pause and the drain');
  const configVolume = pod.volumes.find((v) => v.configMap?.name === configMap.metadata.name);
  t.ok(configVolume, 'the ConfigMap is a volume');
  const mount = container.volumeMounts.find((m) => m.name === configVolume!.name)!;
  t.equal(`${mount.mountPath}/gateway.yaml`, container.args[container.args.indexOf('--config') + 1], 'tollgate start reads the mounted file');
  t.equal(container.args[container.args.indexOf('--workers') + 1], String(Number.parseInt(container.resources.limits.cpu, 10)), 'one worker per CPU of the limit');
  const secret = found.get('Secret')! as Manifest & { stringData: Record<string, string> };
  for (const env of container.env.filter((e) => e.valueFrom !== undefined)) {
    t.equal(env.valueFrom!.secretKeyRef.name, secret.metadata.name);
    t.ok(env.valueFrom!.secretKeyRef.key in secret.stringData, `${env.name} comes from the Secret`);
  }
  t.ok(container.env.some((e) => e.name === 'TOLLGATE_REDIS_CLUSTER'), 'Redis Cluster wiring');
  const labels = deployment.spec.template.metadata.labels;
  const service = found.get('Service')! as Manifest & { spec: { selector: Record<string, string>; ports: Array<{ port: number; targetPort: string | number }> } };
  t.match(labels, service.spec.selector, 'the Service selects the pods');
  const pdb = found.get('PodDisruptionBudget')! as Manifest & { spec: { selector: { matchLabels: Record<string, string> } } };
  t.match(labels, pdb.spec.selector.matchLabels, 'the budget covers the pods');
  const hpa = found.get('HorizontalPodAutoscaler')! as Manifest & { spec: { scaleTargetRef: { kind: string; name: string } } };
  t.same(hpa.spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: deployment.metadata.name });
  const monitor = found.get('PodMonitor')! as Manifest & { spec: { selector: { matchLabels: Record<string, string> }; podMetricsEndpoints: Array<{ port: string; path: string; bearerTokenSecret: { name: string; key: string } }> } };
  t.match(labels, monitor.spec.selector.matchLabels, 'the PodMonitor selects the pods');
  t.equal(monitor.spec.podMetricsEndpoints[0]!.path, '/metrics');
  t.ok(monitor.spec.podMetricsEndpoints[0]!.bearerTokenSecret.key in secret.stringData, 'Prometheus sends the metrics token');
  // The operator routes on their own port: the config's adminListen is the container's `admin` port,
  // which Prometheus scrapes and the Service does not expose.
  const adminListen = (config.server as { adminListen?: { port: number } }).adminListen;
  t.ok(adminListen, 'the config sets server.adminListen');
  const adminPort = container.ports.find((p) => p.name === 'admin');
  t.equal(adminPort?.containerPort, adminListen?.port, 'the container declares the operator port');
  t.equal(monitor.spec.podMetricsEndpoints[0]!.port, 'admin', 'metrics are scraped on the operator port');
  const servicePorts = service.spec.ports;
  t.same(servicePorts.map((p) => p.targetPort), ['http'], 'the Service exposes the clients\' port only');
  t.notOk(servicePorts.some((p) => p.port === adminListen?.port || p.targetPort === adminListen?.port), 'not the operator port');
});

/** The Dockerfile's instructions of its last stage, how many stages it has, and the packages its build stage installs besides the tarball. */
function dockerfile(): { stages: number; env: Record<string, string>; user: string; healthcheck: string; entrypoint: string[]; cmd: string[]; packages: string[] } {
  const text = readFileSync(join(root, 'deploy/Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  const stages = lines.filter((l) => l.startsWith('FROM ')).length;
  const last = lines.slice(lines.map((l) => l.startsWith('FROM ')).lastIndexOf(true));
  const env: Record<string, string> = {};
  for (const line of last.filter((l) => l.startsWith('ENV '))) for (const [, name, value] of line.slice(4).matchAll(/(\w+)=(\S+)/g)) env[name!] = value!;
  const json = (word: string): string[] => JSON.parse(last.find((l) => l.startsWith(`${word} `))!.slice(word.length + 1)) as string[];
  const install = lines.find((l) => /npm install .*tollgate-\*\.tgz/.test(l))!;
  const packages = install.slice(install.indexOf('tollgate-*.tgz') + 'tollgate-*.tgz'.length).trim().split(/\s+/);
  return { stages, env, user: last.find((l) => l.startsWith('USER '))!.slice(5), healthcheck: last.find((l) => l.startsWith('HEALTHCHECK '))!, entrypoint: json('ENTRYPOINT'), cmd: json('CMD'), packages };
}

t.test('the image is multi-stage, runs as a user, checks /healthz and starts the package\'s tollgate command', async (t) => {
  const image = dockerfile();
  t.ok(image.stages >= 2, 'multi-stage');
  t.not(image.user, 'root');
  t.match(image.healthcheck, /\/healthz/);
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { bin: { tollgate: string } };
  t.equal(image.entrypoint.at(-1), `/app/node_modules/tollgate/${pkg.bin.tollgate}`, 'the entrypoint is the installed tollgate command');
  t.same(image.cmd.slice(0, 3), ['start', '--config', '/etc/tollgate/gateway.yaml']);
});

/** Runs `command` in `cwd`; rejects with its output when it fails. */
function run(command: string, args: readonly string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(output) : reject(new Error(`${command} ${args.join(' ')} exited with ${code}: ${output.slice(-3000)}`))));
  });
}

/**
 * The image's /app, built as the Dockerfile's build stage builds it: the package packed (`npm pack`,
 * which builds it), then installed with the packages the Dockerfile names into an empty project.
 */
async function imageTree(t: Test, packages: readonly string[]): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-image-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await run('npm', ['pack', '--pack-destination', dir], root);
  const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'))!;
  const app = join(dir, 'app');
  mkdirSync(app);
  await run('npm', ['init', '-y'], app);
  // Without install scripts: better-sqlite3's native build is the image's (its build stage has a compiler);
  // the pod's configuration keeps its store in Redis and never loads it.
  await run('npm', ['install', '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', join(dir, tarball), ...packages], app);
  return app;
}

/** The pod's `tollgate start`, run from `app` (the image's /app) with `env`; its output collected, killed at the end of `t`. */
function startContainer(t: Test, app: string, entrypoint: readonly string[], args: readonly string[], env: Record<string, string>, home: string): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const main = entrypoint.at(-1)!.replace(/^\/app\//, `${app}/`);
  const child = spawn(process.execPath, [main, ...args], { cwd: app, env: { PATH: process.env.PATH!, HOME: home, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  return { child, output: () => output, exited };
}

t.test('the image\'s file tree, built from the packed tarball, runs the pod\'s command: placeholders refused, two workers serve, operator routes only on the operator port, SIGTERM exits 0', async (t) => {
  const image = dockerfile();
  const deployment = manifests().get('Deployment')! as Manifest & { spec: { template: { spec: PodSpec } } };
  const container = deployment.spec.template.spec.containers[0]!;
  const secret = (manifests().get('Secret')! as Manifest & { stringData: Record<string, string> }).stringData;
  const configMap = (manifests().get('ConfigMap')! as Manifest & { data: Record<string, string> }).data;
  t.equal(image.entrypoint[0], 'node');

  const app = await imageTree(t, image.packages);
  const anvil = await startAnvil();
  t.teardown(() => anvil.stop());
  const redis = await startRedisServer();
  t.teardown(() => redis.stop());
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-container-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // What the pod mounts, with the chain nodes replaced by a real local one and the operator port by a free one.
  const config = parse(configMap['gateway.yaml']!) as GatewayConfigInput & { server: { adminListen: { host: string; port: number } } };
  for (const network of config.networks) for (const upstream of network.upstreams ?? []) upstream.url = anvil.url;
  const adminPort = await freePort();
  config.server.adminListen = { host: '127.0.0.1', port: adminPort };
  const configFile = join(dir, 'gateway.yaml');
  writeFileSync(configFile, JSON.stringify(config));

  // The pod's environment: the image's, then the Deployment's with the Secret's values. The Cluster's
  // seed nodes become a single local Redis here (the fleet test runs a real Cluster); the port is a free one.
  const podEnv = (values: Record<string, string>): Record<string, string> => {
    const env: Record<string, string> = { ...image.env, TOLLGATE_DATA_DIR: dir };
    for (const e of container.env) env[e.name] = e.value ?? values[e.valueFrom!.secretKeyRef.key]!;
    delete env.TOLLGATE_REDIS_CLUSTER;
    env.TOLLGATE_REDIS_URL = redis.url;
    return env;
  };
  const port = await freePort();
  // The Deployment's args replace the image's CMD.
  const args = container.args.map((arg) => (arg === '/etc/tollgate/gateway.yaml' ? configFile : arg === '0.0.0.0' ? '127.0.0.1' : arg));

  // As shipped, the Secret holds placeholders: refused at start, naming the setting.
  const shipped = startContainer(t, app, image.entrypoint, args, { ...podEnv(secret), PORT: String(port) }, dir);
  t.equal(await shipped.exited, 1, 'the placeholders are refused');
  t.match(shipped.output(), /plugins\.admin\.token: is a placeholder \(it begins with "change-me"\): set TOLLGATE_ADMIN_TOKEN/, shipped.output().slice(-2000));

  // With the operator's own secrets.
  const secrets: Record<string, string> = { ...secret, 'admin-token': randomBytes(24).toString('base64url'), 'metrics-token': randomBytes(24).toString('base64url') };
  const pod = startContainer(t, app, image.entrypoint, args, { ...podEnv(secrets), PORT: String(port) }, dir);
  await until('the gateway serves', () => /Workers: +2 processes/.test(pod.output()) || pod.child.exitCode !== null, 120_000, 100);
  t.match(pod.output(), /Listening on http:\/\/127\.0\.0\.1:\d+/, pod.output().slice(-2000));
  t.match(pod.output(), /Store: +Redis/, 'the store is Redis');
  const origin = `http://127.0.0.1:${port}`;
  const operator = `http://127.0.0.1:${adminPort}`;
  t.equal((await fetch(`${origin}/healthz`)).status, 200, 'liveness');
  const ready = await fetch(`${origin}/readyz`);
  t.equal(ready.status, 200, 'readiness');
  t.match(await ready.json(), { ready: true, store: 'ok', group: '2/2 workers serving' });

  // The operator routes answer on the operator port only.
  const bearer = (token: string): RequestInit => ({ headers: { authorization: `Bearer ${token}` } });
  for (const path of ['/admin/v1/keys', '/admin/', '/metrics']) {
    const token = path === '/metrics' ? secrets['metrics-token']! : secrets['admin-token']!;
    t.equal((await fetch(`${origin}${path}`, bearer(token))).status, 404, `the public port does not serve ${path}`);
  }
  t.equal((await fetch(`${operator}/admin/`, bearer(secrets['admin-token']!))).status, 200, 'the dashboard serves, Chart.js installed');
  t.equal((await fetch(`${operator}/admin/chart.umd.js`)).status, 200, 'with its charts');
  t.equal((await fetch(`${operator}/metrics`)).status, 401, 'metrics need the token');
  const metrics = await fetch(`${operator}/metrics`, bearer(secrets['metrics-token']!));
  t.equal(metrics.status, 200);
  t.match(await metrics.text(), /tollgate_workers\{state="serving"\} 2/);

  // A plan and a key made through the admin API, then a call with it on the public port.
  const admin = (path: string, body: unknown): Promise<Response> => fetch(`${operator}/admin/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${secrets['admin-token']}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  t.equal((await admin('/plans', { name: 'starter', dailyCredits: 1_000_000, creditsPerSecond: 1_000 })).status, 201, 'a plan is made');
  const created = await admin('/keys', { plan: 'starter', id: 'first-customer' });
  t.equal(created.status, 201, 'a key is made');
  const { apiKey } = (await created.json()) as { apiKey: string };
  const call = await fetch(`${origin}/eth/v3/${apiKey}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }) });
  t.equal(call.status, 200);
  t.match(await call.json(), { result: /^0x[0-9a-f]+$/ }, 'the key is served on the public port');

  pod.child.kill('SIGTERM');
  t.equal(await pod.exited, 0, 'SIGTERM drains and exits 0');
});
