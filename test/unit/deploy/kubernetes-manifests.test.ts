import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { PrometheusRule, ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Service } from 'kubernetes-models/v1';
import type { IContainer, IPodSpec, IProbe } from 'kubernetes-models/v1';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../../src/config/load.js';
import type { AppConfig } from '../../../src/config/model.js';
import { validateConfig, validateJetStreamSettings } from '../../../src/config/validate.js';
import { ROOT, kubectlVersion, kustomize, runTool, type KubernetesObject } from '../../support/deploy-tools.js';

/**
 * deploy/kubernetes (docs/deployment.md#kubernetes), rendered by the real `kubectl kustomize`
 * (Debian's kubectl 1.20, whose kustomize is the v2 line the files keep to) and validated offline
 * against the API schemas of a current Kubernetes (kubernetes-models) and the Prometheus
 * Operator's CRDs. Then what matters is asserted on the rendered objects.
 */

const KUBERNETES = join(ROOT, 'deploy/kubernetes');
const OVERLAYS = ['in-memory', 'jetstream', 'ingress-nginx'] as const;
type Overlay = (typeof OVERLAYS)[number];

/** The server's worst-case stop: metrics 5 s + drain 30 s + NATS close 5 s + log flush 2 s (docs/deployment.md). */
const SERVER_WORST_CASE_STOP_SECONDS = 5 + 30 + 5 + 2;

interface Validatable {
  validate(): void;
}
const MODELS: Record<string, new (data: never) => Validatable> = {
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'v1/Service': Service,
  'v1/ConfigMap': ConfigMap,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1/Ingress': Ingress,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
};

/** Validates against the model of its apiVersion and kind; an object no model knows is an error too. */
function validate(object: KubernetesObject): void {
  const Model = MODELS[`${object.apiVersion}/${object.kind}`];
  if (!Model) throw new Error(`no schema for ${object.apiVersion} ${object.kind} (${object.metadata.name})`);
  new Model(object as never).validate();
}

const rendered = new Map<Overlay, KubernetesObject[]>();
function render(overlay: Overlay): KubernetesObject[] {
  let objects = rendered.get(overlay);
  if (!objects) {
    objects = kustomize(join(KUBERNETES, 'overlays', overlay));
    rendered.set(overlay, objects);
  }
  return objects;
}

function find<T = KubernetesObject>(objects: readonly KubernetesObject[], kind: string, name: string): T {
  const found = objects.find((object) => object.kind === kind && object.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} among ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  return found as T;
}

interface Workload extends KubernetesObject {
  readonly spec: {
    replicas?: number;
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: IPodSpec };
    strategy?: { type?: string };
    serviceName?: string;
  };
}

function avisoDeployment(overlay: Overlay): Workload {
  return find<Workload>(render(overlay), 'Deployment', 'aviso');
}

function container(workload: Workload, name: string): IContainer {
  const found = workload.spec.template.spec.containers.find((c) => c.name === name);
  if (!found) throw new Error(`no container ${name}`);
  return found;
}

/** The container port a probe names (by name or number). */
function probePort(probe: IProbe | undefined, of: IContainer): number | undefined {
  const port = probe?.httpGet?.port;
  return typeof port === 'number' ? port : of.ports?.find((p) => p.name === port)?.containerPort;
}

/** The server configuration the overlay's ConfigMap carries, loaded and validated as at startup, with the pod's environment. */
function serverConfigOf(overlay: Overlay): AppConfig {
  const objects = render(overlay);
  const deployment = avisoDeployment(overlay);
  const volume = deployment.spec.template.spec.volumes?.find((v) => v.name === 'config');
  const configMap = find<{ data: Record<string, string> }>(objects, 'ConfigMap', volume?.configMap?.name ?? '');
  const dir = mkdtempSync(join(tmpdir(), 'aviso-k8s-config-'));
  temporary.push(dir);
  const file = join(dir, 'config.yaml');
  writeFileSync(file, configMap.data['config.yaml'] ?? '');
  const literalEnv = Object.fromEntries(
    (container(deployment, 'aviso').env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, e.value as string]),
  );
  const config = loadConfig({ env: { ...literalEnv, AVISOSERVER_CONFIG_FILE: file } });
  validateConfig(config);
  return config;
}

const temporary: string[] = [];
afterAll(() => {
  for (const dir of temporary.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe(`deploy/kubernetes rendered by kubectl ${kubectlVersion()} kustomize`, () => {
  it.each(OVERLAYS)('overlay %s renders and every object validates against the Kubernetes and Prometheus Operator schemas', (overlay) => {
    const objects = render(overlay);
    expect(objects.length).toBeGreaterThan(0);
    const failures: string[] = [];
    for (const object of objects) {
      try {
        validate(object);
      } catch (error) {
        failures.push(`${object.kind}/${object.metadata.name}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('is checked by a validator that rejects a wrong field type and an unknown kind', () => {
    const deployment = structuredClone(avisoDeployment('in-memory')) as unknown as {
      spec: { template: { spec: { containers: { ports: { containerPort: unknown }[] }[] } } };
    };
    const port = deployment.spec.template.spec.containers[0]?.ports[0];
    if (port) port.containerPort = 'http';
    expect(() => validate(deployment as unknown as KubernetesObject)).toThrow(/containerPort/);
    expect(() => validate({ apiVersion: 'v1', kind: 'Nonsense', metadata: { name: 'x' } })).toThrow(/no schema/);
    expect(() => kustomize(join(KUBERNETES, 'overlays/does-not-exist'))).toThrow(/kubectl kustomize/);
  });

  it('renders what each overlay is for', () => {
    const kinds = (overlay: Overlay) =>
      render(overlay)
        .map((o) => `${o.kind}/${o.metadata.name.replace(/-[a-z0-9]{10}$/, '')}`)
        .sort();
    const shared = [
      'ConfigMap/aviso-config',
      'ConfigMap/aviso-grafana-dashboard',
      'Deployment/aviso',
      'PodDisruptionBudget/aviso',
      'PrometheusRule/aviso',
      'Service/aviso',
      'ServiceMonitor/aviso',
    ];
    expect(kinds('in-memory')).toEqual(shared.sort());
    const jetstream = [
      ...shared,
      'ConfigMap/aviso-nats-config',
      'HorizontalPodAutoscaler/aviso',
      'PodDisruptionBudget/aviso-nats',
      'Service/aviso-nats',
      'Service/aviso-nats-headless',
      'StatefulSet/aviso-nats',
    ];
    expect(kinds('jetstream')).toEqual(jetstream.sort());
    expect(kinds('ingress-nginx')).toEqual([...jetstream, 'Ingress/aviso'].sort());
  });
});

describe('the aviso-ts Deployment', () => {
  it.each(OVERLAYS)('%s: startup and liveness probe /health, readiness /ready, on the port the server listens on', (overlay) => {
    const aviso = container(avisoDeployment(overlay), 'aviso');
    const config = serverConfigOf(overlay);
    expect(aviso.startupProbe?.httpGet?.path).toBe('/health');
    expect(aviso.livenessProbe?.httpGet?.path).toBe('/health');
    expect(aviso.readinessProbe?.httpGet?.path).toBe('/ready');
    for (const probe of [aviso.startupProbe, aviso.livenessProbe, aviso.readinessProbe]) {
      expect(probePort(probe, aviso)).toBe(config.application.port);
    }
    // Liveness must not restart a pod that is still starting: the startup probe covers the
    // server's wait for NATS (retry_attempts × timeout_seconds plus the delays between them).
    const startup = aviso.startupProbe ?? {};
    const jetstream = config.notification_backend.jetstream;
    const natsWaitSeconds =
      config.notification_backend.kind === 'jetstream'
        ? jetstream.retry_attempts * jetstream.timeout_seconds + ((jetstream.retry_attempts - 1) * jetstream.reconnect_delay_ms) / 1000
        : 0;
    expect((startup.periodSeconds ?? 10) * (startup.failureThreshold ?? 3)).toBeGreaterThan(natsWaitSeconds);
  });

  it.each(OVERLAYS)('%s: the metrics port is the configured one, listening beyond loopback', (overlay) => {
    const aviso = container(avisoDeployment(overlay), 'aviso');
    const config = serverConfigOf(overlay);
    expect(config.metrics).toMatchObject({ enabled: true, host: '0.0.0.0' });
    expect(aviso.ports?.find((p) => p.name === 'metrics')?.containerPort).toBe(config.metrics.port);
    expect(config.application.host).toBe('0.0.0.0');
  });

  it.each(OVERLAYS)('%s: runs as non-root with a read-only root filesystem and no privileges', (overlay) => {
    const pod = avisoDeployment(overlay).spec.template.spec;
    const aviso = container(avisoDeployment(overlay), 'aviso');
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
    expect(pod.securityContext?.runAsUser).not.toBe(0);
    expect(aviso.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(pod.automountServiceAccountToken).toBe(false);
  });

  it.each(OVERLAYS)("%s: the reference chart's resources, and a grace period longer than the server's stop", (overlay) => {
    const deployment = avisoDeployment(overlay);
    const aviso = container(deployment, 'aviso');
    expect(aviso.resources).toEqual({ requests: { cpu: '500m', memory: '512Mi' }, limits: { cpu: '2', memory: '2Gi' } });
    const preStop = aviso.lifecycle?.preStop?.exec?.command ?? [];
    expect(preStop[0]).toBe('sleep');
    const pause = Number(preStop[1]);
    expect(deployment.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(pause + SERVER_WORST_CASE_STOP_SECONDS);
  });

  it.each(OVERLAYS)(
    '%s: the config is the generated ConfigMap, mounted as a directory (so the kubelet updates it) and named by AVISOSERVER_CONFIG_FILE',
    (overlay) => {
      const deployment = avisoDeployment(overlay);
      const aviso = container(deployment, 'aviso');
      const volume = deployment.spec.template.spec.volumes?.find((v) => v.name === 'config');
      expect(volume?.configMap?.name).toMatch(/^aviso-config-[a-z0-9]{10}$/);
      const mount = aviso.volumeMounts?.find((m) => m.name === 'config');
      expect(mount?.subPath).toBeUndefined();
      expect(mount?.readOnly).toBe(true);
      expect(aviso.env?.find((e) => e.name === 'AVISOSERVER_CONFIG_FILE')?.value).toBe(`${mount?.mountPath}/config.yaml`);
    },
  );

  it('an edit of the config gives the ConfigMap a new name, and the Deployment follows it (the pods roll)', () => {
    const copy = mkdtempSync(join(tmpdir(), 'aviso-k8s-'));
    temporary.push(copy);
    cpSync(join(ROOT, 'deploy'), join(copy, 'deploy'), { recursive: true });
    const overlay = join(copy, 'deploy/kubernetes/overlays/jetstream');
    const configMapName = (objects: KubernetesObject[]) =>
      objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('aviso-config-'))?.metadata.name;
    const mounted = (objects: KubernetesObject[]) =>
      find<Workload>(objects, 'Deployment', 'aviso').spec.template.spec.volumes?.find((v) => v.name === 'config')?.configMap?.name;

    const before = kustomize(overlay);
    expect(configMapName(before)).toBe(configMapName(render('jetstream')));
    const file = join(overlay, 'config.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('level: info', 'level: debug'));
    const after = kustomize(overlay);
    expect(configMapName(after)).not.toBe(configMapName(before));
    expect(mounted(before)).toBe(configMapName(before));
    expect(mounted(after)).toBe(configMapName(after));
  });

  it('in-memory: exactly one replica, replaced rather than rolled, and no autoscaler (history is per process)', () => {
    const deployment = avisoDeployment('in-memory');
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.strategy?.type).toBe('Recreate');
    expect(render('in-memory').filter((o) => o.kind === 'HorizontalPodAutoscaler')).toEqual([]);
    expect(serverConfigOf('in-memory').notification_backend.kind).toBe('in_memory');
  });

  it('in-memory: the sequence journal (D40) is on an emptyDir, which outlives container restarts, where state_directory resolves in the image', () => {
    const deployment = avisoDeployment('in-memory');
    const aviso = container(deployment, 'aviso');
    const memory = serverConfigOf('in-memory').notification_backend.in_memory;
    expect(memory.persist_sequences).toBe(true);
    const directory = posix.resolve(aviso.workingDir ?? '/app', memory.state_directory);
    const mount = aviso.volumeMounts?.find((m) => m.mountPath === directory);
    expect(mount, `a volume mounted at ${directory}`).toBeDefined();
    expect(mount?.readOnly ?? false).toBe(false);
    const volume = deployment.spec.template.spec.volumes?.find((v) => v.name === mount?.name);
    expect(volume?.emptyDir).toBeDefined();
  });

  it('jetstream: 3 replicas, an autoscaler from 3 on CPU and memory, the streams replicated 3 times', () => {
    expect(avisoDeployment('jetstream').spec.replicas).toBe(3);
    const hpa = find<{
      spec: {
        scaleTargetRef: { kind: string; name: string };
        minReplicas: number;
        maxReplicas: number;
        metrics: { resource: { name: string; target: { averageUtilization: number } } }[];
      };
    }>(render('jetstream'), 'HorizontalPodAutoscaler', 'aviso');
    expect(hpa.spec.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: 'aviso' });
    expect(hpa.spec.minReplicas).toBe(3);
    expect(hpa.spec.maxReplicas).toBeGreaterThan(3);
    expect(Object.fromEntries(hpa.spec.metrics.map((m) => [m.resource.name, m.resource.target.averageUtilization]))).toEqual({
      cpu: 70,
      memory: 80,
    });
    const config = serverConfigOf('jetstream');
    expect(config.notification_backend.kind).toBe('jetstream');
    expect(() => validateJetStreamSettings(config.notification_backend.jetstream)).not.toThrow();
    expect(config.notification_backend.jetstream.replicas).toBe(3);
    expect(config.notification_backend.jetstream.max_reconnect_attempts).toBe(0);
  });

  it('a PodDisruptionBudget that selects the pods and lets one go at a time', () => {
    for (const overlay of OVERLAYS) {
      const pdb = find<{ spec: { maxUnavailable: number; selector: { matchLabels: Record<string, string> } } }>(
        render(overlay),
        'PodDisruptionBudget',
        'aviso',
      );
      expect(pdb.spec.maxUnavailable).toBe(1);
      expect(avisoDeployment(overlay).spec.template.metadata.labels).toMatchObject(pdb.spec.selector.matchLabels);
    }
  });
});

describe('Service and ServiceMonitor', () => {
  it('the Service selects the pods and carries the API and metrics ports; the ServiceMonitor scrapes the metrics one', () => {
    const objects = render('jetstream');
    const service = find<{
      metadata: { labels: Record<string, string> };
      spec: { selector: Record<string, string>; ports: { name: string; port: number; targetPort: string }[] };
    }>(objects, 'Service', 'aviso');
    const deployment = avisoDeployment('jetstream');
    expect(deployment.spec.template.metadata.labels).toMatchObject(service.spec.selector);
    const aviso = container(deployment, 'aviso');
    for (const name of ['http', 'metrics']) {
      const port = service.spec.ports.find((p) => p.name === name);
      expect(port, name).toBeDefined();
      expect(aviso.ports?.some((p) => p.name === port?.targetPort)).toBe(true);
    }
    const monitor = find<{ spec: { selector: { matchLabels: Record<string, string> }; endpoints: { port: string; path: string }[] } }>(
      objects,
      'ServiceMonitor',
      'aviso',
    );
    expect(service.metadata.labels).toMatchObject(monitor.spec.selector.matchLabels);
    expect(monitor.spec.endpoints).toEqual([expect.objectContaining({ port: 'metrics', path: '/metrics' })]);
  });

  it('the PrometheusRule carries the groups of the rules file, and the Grafana ConfigMap the dashboard', () => {
    const objects = render('in-memory');
    const rule = find<{ spec: { groups: unknown } }>(objects, 'PrometheusRule', 'aviso');
    const rulesFile = parse(readFileSync(join(ROOT, 'deploy/prometheus/rules/aviso-ts.rules.yml'), 'utf8')) as { groups: unknown };
    expect(rule.spec.groups).toEqual(rulesFile.groups);
    const dashboard = find<{ metadata: { labels: Record<string, string> }; data: Record<string, string> }>(
      objects,
      'ConfigMap',
      'aviso-grafana-dashboard',
    );
    expect(dashboard.metadata.labels.grafana_dashboard).toBe('1');
    expect(JSON.parse(dashboard.data['aviso-ts.json'] ?? '')).toEqual(
      JSON.parse(readFileSync(join(ROOT, 'deploy/grafana/aviso-ts.json'), 'utf8')),
    );
  });
});

describe('the NATS JetStream cluster of the jetstream overlay', () => {
  const objects = () => render('jetstream');

  it('a 3-node StatefulSet governed by a headless Service, with persistent storage', () => {
    const nats = find<Workload & { spec: { volumeClaimTemplates: { metadata: { name: string } }[] } }>(
      objects(),
      'StatefulSet',
      'aviso-nats',
    );
    expect(nats.spec.replicas).toBe(3);
    const headless = find<{
      spec: { clusterIP: string; publishNotReadyAddresses: boolean; selector: Record<string, string>; ports: { name: string }[] };
    }>(objects(), 'Service', nats.spec.serviceName ?? '');
    expect(headless.spec.clusterIP).toBe('None');
    expect(headless.spec.publishNotReadyAddresses).toBe(true);
    expect(nats.spec.template.metadata.labels).toMatchObject(headless.spec.selector);
    expect(headless.spec.ports.map((p) => p.name).sort()).toEqual(['client', 'cluster', 'monitor']);
    const server = container(nats, 'nats');
    expect(server.volumeMounts?.find((m) => m.name === 'data')?.mountPath).toBe('/data');
    expect(nats.spec.volumeClaimTemplates.map((t) => t.metadata.name)).toEqual(['data']);
    expect(nats.spec.template.spec.securityContext).toMatchObject({ runAsNonRoot: true });
    expect(server.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
  });

  it('aviso-ts reaches it through the client Service', () => {
    const url = new URL(serverConfigOf('jetstream').notification_backend.jetstream.nats_url);
    const client = find<{ spec: { selector: Record<string, string>; ports: { port: number; targetPort: string }[] } }>(
      objects(),
      'Service',
      url.hostname,
    );
    expect(client.spec.ports.map((p) => p.port)).toContain(Number(url.port));
    expect(find<Workload>(objects(), 'StatefulSet', 'aviso-nats').spec.template.metadata.labels).toMatchObject(client.spec.selector);
  });

  it('its config is valid for nats-server, with JetStream on /data and routes to the three pods through the headless Service', () => {
    const nats = find<Workload>(objects(), 'StatefulSet', 'aviso-nats');
    const volume = nats.spec.template.spec.volumes?.find((v) => v.name === 'config');
    const configMap = find<{ data: Record<string, string> }>(objects(), 'ConfigMap', volume?.configMap?.name ?? '');
    const text = configMap.data['nats-server.conf'] ?? '';
    const dir = mkdtempSync(join(tmpdir(), 'aviso-nats-conf-'));
    temporary.push(dir);
    const file = join(dir, 'nats-server.conf');
    writeFileSync(file, text);
    const check = runTool('nats-server', ['-t', '-c', file], { env: { ...process.env, SERVER_NAME: 'aviso-nats-0' } });
    expect(check.status, check.stderr + check.stdout).toBe(0);
    writeFileSync(file, `${text}\nno_such_setting: true\n`);
    expect(runTool('nats-server', ['-t', '-c', file], { env: { ...process.env, SERVER_NAME: 'aviso-nats-0' } }).status).not.toBe(0);

    expect(text).toMatch(/store_dir:\s*\/data/);
    const routes = [...text.matchAll(/nats:\/\/(aviso-nats-\d)\.([\w-]+):6222/g)];
    expect(routes.map((r) => r[1])).toEqual(['aviso-nats-0', 'aviso-nats-1', 'aviso-nats-2']);
    expect(new Set(routes.map((r) => r[2]))).toEqual(new Set([nats.spec.serviceName]));
    // Each node needs its own name for JetStream clustering: the pod's.
    expect(container(nats, 'nats').env?.find((e) => e.name === 'SERVER_NAME')?.valueFrom?.fieldRef?.fieldPath).toBe('metadata.name');
  });
});

describe('the ingress-nginx overlay', () => {
  it("streams pass through unbuffered, with timeouts past a stream's life, TLS from a Secret, to the API port only", () => {
    const objects = render('ingress-nginx');
    const ingress = find<{
      metadata: { annotations: Record<string, string> };
      spec: {
        tls: { secretName: string; hosts: string[] }[];
        rules: { host: string; http: { paths: { backend: { service: { name: string; port: { name: string } } } }[] } }[];
      };
    }>(objects, 'Ingress', 'aviso');
    const annotations = ingress.metadata.annotations;
    expect(annotations['nginx.ingress.kubernetes.io/proxy-buffering']).toBe('off');
    const config = serverConfigOf('ingress-nginx');
    for (const key of ['proxy-read-timeout', 'proxy-send-timeout']) {
      expect(Number(annotations[`nginx.ingress.kubernetes.io/${key}`]), key).toBeGreaterThan(
        config.watch_endpoint.connection_max_duration_sec,
      );
    }
    expect(ingress.spec.tls).toEqual([{ secretName: 'aviso-tls', hosts: [ingress.spec.rules[0]?.host] }]);
    const backends = ingress.spec.rules.flatMap((rule) => rule.http.paths.map((path) => path.backend.service));
    expect(backends).toEqual([{ name: 'aviso', port: { name: 'http' } }]);
    // CloudEvent sources name the public host.
    expect(config.application.base_url).toBe(`https://${ingress.spec.rules[0]?.host}`);
  });
});
