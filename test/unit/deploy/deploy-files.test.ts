import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../../src/config/load.js';
import type { AppConfig } from '../../../src/config/model.js';
import { validateConfig, validateJetStreamSettings } from '../../../src/config/validate.js';

/**
 * The packaging files (docs/design/rules/operations.md §5): `docker-compose.yml`, `deploy/nats-server.conf`,
 * `deploy/config.yaml`, the shipped `config/config.yaml`, the `Dockerfile` and `.dockerignore`.
 * No Docker engine is needed: the compose file is validated with `docker compose config` (or
 * `docker-compose config`), the Dockerfile is read instruction by instruction.
 */

const ROOT = resolve(import.meta.dirname, '../../..');
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; main: string };
const temporary: string[] = [];

afterAll(() => {
  for (const dir of temporary.splice(0)) rmSync(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// docker compose

/** `docker compose` when the plugin is there, else `docker-compose`; fails loudly without either. */
function composeCommand(): readonly string[] {
  const candidates: readonly (readonly string[])[] = [['docker', 'compose'], ['docker-compose']];
  for (const command of candidates) {
    const [binary = '', ...args] = command;
    const probe = spawnSync(binary, [...args, 'version'], { encoding: 'utf8', timeout: 30_000 });
    if (probe.status === 0) return command;
  }
  throw new Error(
    'Neither `docker compose` nor `docker-compose` is installed, so docker-compose.yml cannot be validated. ' +
      "Install Debian's docker-compose (`apt-get update && apt-get install -y docker-compose`) or the Docker " +
      'compose plugin, or run `npm test` as root, which installs docker-compose when missing.',
  );
}

function composeConfig(file: string, profiles: readonly string[] = []): { status: number | null; stdout: string; stderr: string } {
  const [binary = '', ...args] = composeCommand();
  const result = spawnSync(binary, [...args, '-f', file, ...profiles.flatMap((profile) => ['--profile', profile]), 'config'], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
    // No NATS_TOKEN or COMPOSE_* from the developer's shell may change the result.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir() },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

type Mapping = Record<string, unknown>;

interface ComposeService {
  readonly image?: string;
  readonly build?: string | { context?: string; target?: string };
  readonly command?: string | readonly string[];
  readonly volumes?: readonly (string | { source?: string; target?: string; read_only?: boolean })[];
  readonly ports?: readonly (string | number | { target?: number | string; published?: number | string })[];
  readonly environment?: Record<string, string | number | boolean | null> | readonly string[];
  readonly healthcheck?: { test?: string | readonly string[]; disable?: boolean };
  readonly depends_on?: readonly string[] | Record<string, { condition?: string }>;
  readonly stop_grace_period?: string;
  readonly profiles?: readonly string[];
}

interface ComposeFile {
  readonly services: Record<string, ComposeService>;
  readonly volumes?: Record<string, Mapping | null>;
}

const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as ComposeFile;

/** Compose durations (`40s`, `1m30s`, `1.5m`) in seconds. */
function durationSeconds(text: string): number {
  const units: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 0.001, us: 1e-6, ns: 1e-9 };
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(h|ms|us|ns|m|s)/g)];
  expect(parts.map((p) => p[0]).join(''), `duration '${text}'`).toBe(text);
  return parts.reduce((sum, [, value = '0', unit = 's']) => sum + Number(value) * (units[unit] ?? 0), 0);
}

/** `host:container` mappings of a service, as `"published:target"`. */
function portMappings(service: ComposeService): string[] {
  return (service.ports ?? []).map((port) => {
    if (typeof port === 'object') return `${port.published ?? ''}:${port.target ?? ''}`;
    const parts = String(port).split(':');
    return parts.slice(-2).join(':');
  });
}

/** Short-syntax volumes as `{ source, target, mode }`. */
function volumeMounts(service: ComposeService): { source: string; target: string; readOnly: boolean }[] {
  return (service.volumes ?? []).map((volume) => {
    if (typeof volume === 'object')
      return { source: volume.source ?? '', target: volume.target ?? '', readOnly: volume.read_only === true };
    const [source = '', target = '', mode = ''] = volume.split(':');
    return { source, target, readOnly: mode.split(',').includes('ro') };
  });
}

function environmentOf(service: ComposeService): Record<string, string> {
  const environment = service.environment ?? {};
  if (Array.isArray(environment)) {
    return Object.fromEntries(
      environment.map((entry: string) => {
        const index = entry.indexOf('=');
        return index < 0 ? [entry, ''] : [entry.slice(0, index), entry.slice(index + 1)];
      }),
    );
  }
  return Object.fromEntries(
    Object.entries(environment as Record<string, unknown>)
      .filter(([, value]) => value !== null && value !== undefined)
      .map(([key, value]) => [key, String(value)]),
  );
}

function service(name: string): ComposeService {
  const found = compose.services[name];
  if (!found) throw new Error(`docker-compose.yml has no service '${name}'`);
  return found;
}

describe('docker-compose.yml (docs/design/rules/operations.md §5.4)', () => {
  it('validates with `docker compose config` (or docker-compose)', () => {
    const result = composeConfig(join(ROOT, 'docker-compose.yml'));
    expect(result.stderr).not.toMatch(/error|invalid/i);
    expect(result.status, result.stderr).toBe(0);
    const normalised = parse(result.stdout) as ComposeFile;
    expect(Object.keys(normalised.services).sort()).toEqual(expect.arrayContaining(['aviso', 'nats']));
  });

  it('is checked by a validator that rejects a broken file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'aviso-compose-'));
    temporary.push(dir);
    const file = join(dir, 'docker-compose.yml');
    writeFileSync(file, 'services:\n  broken:\n    image: nats:2-alpine\n    ports: 42\n    no_such_option: true\n');
    expect(composeConfig(file).status).not.toBe(0);
  });

  it('runs NATS with the JetStream config mounted, a persistent volume and a healthcheck', () => {
    const nats = service('nats');
    expect(nats.image).toMatch(/^nats:2/);
    const command = Array.isArray(nats.command) ? nats.command.join(' ') : String(nats.command ?? '');
    const configPath = /--config\s+(\S+)/.exec(command)?.[1];
    expect(configPath, command).toBeDefined();

    const mounts = volumeMounts(nats);
    const configMount = mounts.find((mount) => mount.target === configPath);
    expect(configMount, 'the NATS config is mounted where --config points').toBeDefined();
    expect(configMount?.readOnly).toBe(true);
    const natsConf = readFileSync(resolve(ROOT, configMount?.source ?? ''), 'utf8');
    expect(natsConf).toMatch(/^\s*jetstream\s*\{/m);
    const storeDir = /store_dir:\s*"?([^"\s]+)"?/.exec(natsConf)?.[1];
    expect(storeDir).toBe('/data');
    expect(natsConf).toMatch(/^\s*http:\s*"?0\.0\.0\.0:8222"?/m);

    const dataMount = mounts.find((mount) => mount.target === storeDir);
    expect(dataMount, 'the JetStream store directory is a volume').toBeDefined();
    expect(Object.keys(compose.volumes ?? {}), 'the store is a named (persistent) volume').toContain(dataMount?.source);

    expect(nats.healthcheck?.disable).not.toBe(true);
    const test = Array.isArray(nats.healthcheck?.test) ? nats.healthcheck.test.join(' ') : String(nats.healthcheck?.test ?? '');
    expect(test).toMatch(/8222\/healthz/);
    expect(portMappings(nats)).toEqual(expect.arrayContaining(['4222:4222', '8222:8222']));
  });

  it('runs aviso from the release target after NATS is healthy, on ports 8000 and 9090', () => {
    const aviso = service('aviso');
    expect(typeof aviso.build === 'object' ? aviso.build.target : undefined).toBe('release');
    expect(aviso.depends_on).toMatchObject({ nats: { condition: 'service_healthy' } });
    expect(portMappings(aviso)).toEqual(expect.arrayContaining(['8000:8000', '9090:9090']));
  });

  it("gives aviso a stop_grace_period over the server's own 30 s drain", () => {
    const grace = service('aviso').stop_grace_period;
    expect(grace).toBeDefined();
    expect(durationSeconds(grace ?? '')).toBeGreaterThan(30);
  });

  it('mounts a configuration that, with the service environment, listens on 8000/9090 beyond loopback and uses the nats service', () => {
    const aviso = service('aviso');
    const mount = volumeMounts(aviso).find((m) => m.target === '/app/config/config.yaml');
    expect(mount, "a config mounted at the image's default path").toBeDefined();
    const config = loadConfig({
      env: { ...environmentOf(aviso), AVISOSERVER_CONFIG_FILE: resolve(ROOT, mount?.source ?? '') },
    });
    expect(() => validateConfig(config)).not.toThrow();
    expect(config.application).toMatchObject({ host: '0.0.0.0', port: 8000 });
    expect(config.metrics).toMatchObject({ enabled: true, host: '0.0.0.0', port: 9090 });
    expect(config.notification_backend.kind).toBe('jetstream');
    expect(new URL(config.notification_backend.jetstream.nats_url).hostname).toBe('nats');
    expect(new URL(config.notification_backend.jetstream.nats_url).port).toBe('4222');
  });
});

describe('docker-compose.yml, profile monitoring (docs/deployment.md#monitoring)', () => {
  it('validates with the profile, and adds prometheus and grafana only under it', () => {
    const result = composeConfig(join(ROOT, 'docker-compose.yml'), ['monitoring']);
    expect(result.status, result.stderr).toBe(0);
    const normalised = parse(result.stdout) as ComposeFile;
    expect(Object.keys(normalised.services).sort()).toEqual(['aviso', 'grafana', 'nats', 'prometheus']);
    for (const name of ['prometheus', 'grafana']) expect(service(name).profiles, name).toEqual(['monitoring']);
    for (const name of ['aviso', 'nats']) expect(service(name).profiles, name).toBeUndefined();
  });

  it('names its images with a pinned version', () => {
    expect(service('prometheus').image).toMatch(/^prom\/prometheus:v\d+\.\d+\.\d+$/);
    expect(service('grafana').image).toMatch(/^grafana\/grafana:\d+\.\d+\.\d+$/);
  });

  it("prometheus scrapes aviso's metrics port and loads the rules directory it mounts", () => {
    const prometheus = service('prometheus');
    const mounts = volumeMounts(prometheus);
    const configMount = mounts.find((mount) => mount.target === '/etc/prometheus/prometheus.yml');
    expect(configMount?.readOnly).toBe(true);
    const config = parse(readFileSync(resolve(ROOT, configMount?.source ?? ''), 'utf8')) as {
      rule_files: string[];
      scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
    };
    const rulesMount = mounts.find((mount) => config.rule_files.some((glob) => posix.dirname(glob) === mount.target));
    expect(rulesMount?.source).toBe('./deploy/prometheus/rules');
    const targets = config.scrape_configs.flatMap((job) => job.static_configs.flatMap((c) => c.targets));
    const metricsPort = loadConfig({ env: { AVISOSERVER_CONFIG_FILE: join(ROOT, 'deploy/config.yaml') } }).metrics.port;
    expect(targets).toEqual([`aviso:${metricsPort}`]);
    // aviso publishes 9090 on the host: Prometheus must not claim it too.
    expect(portMappings(prometheus).map((mapping) => mapping.split(':')[0])).not.toContain('9090');
  });

  it('grafana is provisioned with that Prometheus and the dashboard of deploy/grafana', () => {
    const grafana = service('grafana');
    const mounts = volumeMounts(grafana);
    const provisioning = mounts.find((mount) => mount.target === '/etc/grafana/provisioning');
    expect(provisioning?.source).toBe('./deploy/grafana/provisioning');
    const datasources = parse(readFileSync(join(ROOT, 'deploy/grafana/provisioning/datasources/prometheus.yml'), 'utf8')) as {
      datasources: { type: string; url: string }[];
    };
    expect(datasources.datasources).toEqual([expect.objectContaining({ type: 'prometheus', url: 'http://prometheus:9090' })]);
    const providers = parse(readFileSync(join(ROOT, 'deploy/grafana/provisioning/dashboards/aviso-ts.yml'), 'utf8')) as {
      providers: { options: { path: string } }[];
    };
    const dashboardMount = mounts.find((mount) => mount.source === './deploy/grafana/aviso-ts.json');
    expect(posix.dirname(dashboardMount?.target ?? '')).toBe(providers.providers[0]?.options.path);
  });
});

// ---------------------------------------------------------------------------------------------
// configuration files

function loadFile(relative: string): AppConfig {
  return loadConfig({ env: { AVISOSERVER_CONFIG_FILE: join(ROOT, relative) } });
}

describe('deploy/config.yaml and config/config.yaml', () => {
  it('deploy/config.yaml loads and validates (JetStream settings included)', () => {
    const result = validateConfig(loadFile('deploy/config.yaml'));
    expect(result.config.notification_backend.kind).toBe('jetstream');
    expect(() => validateJetStreamSettings(result.config.notification_backend.jetstream)).not.toThrow();
    expect(result.config.application.static_files_path).toBe('/app/static');
  });

  it('config/config.yaml loads and validates', () => {
    const result = validateConfig(loadFile('config/config.yaml'));
    expect(result.config.notification_backend.kind).toBe('in_memory');
    expect(Object.keys(result.config.notification_schema ?? {}).length).toBeGreaterThan(0);
  });

  it("both find the static files at /app/static when run from the image's working directory", () => {
    for (const file of ['deploy/config.yaml', 'config/config.yaml']) {
      expect(posix.resolve('/app', loadFile(file).application.static_files_path), file).toBe('/app/static');
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Dockerfile

interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

interface Stage {
  readonly base: string;
  readonly name: string | undefined;
  readonly instructions: Instruction[];
}

/** Instructions grouped by stage, with continuation lines joined and comments dropped. */
function parseDockerfile(text: string): { globalArgs: Map<string, string>; stages: Stage[] } {
  const logical: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (pending === '' && /^\s*#/.test(line)) continue;
    if (/^\s*#/.test(line)) continue; // comment lines inside a continuation are ignored too
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const full = (pending + line).trim();
    pending = '';
    if (full !== '') logical.push(full);
  }
  const globalArgs = new Map<string, string>();
  const stages: Stage[] = [];
  for (const line of logical) {
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const instruction = { keyword: keyword.toUpperCase(), args: args.trim() };
    if (instruction.keyword === 'FROM') {
      const [, base = '', name] = /^(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?$/i.exec(instruction.args) ?? [];
      stages.push({ base, name: name?.toLowerCase(), instructions: [] });
    } else if (stages.length === 0) {
      if (instruction.keyword === 'ARG') {
        const [name = '', value = ''] = instruction.args.split('=');
        globalArgs.set(name, value);
      }
    } else {
      stages.at(-1)?.instructions.push(instruction);
    }
  }
  return { globalArgs, stages };
}

const dockerfile = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));

/** Where the image's configuration keeps the in-memory sequence journal, relative to the working directory. */
const CONFIG_DEFAULTS_STATE_DIRECTORY = loadConfig({ env: { AVISOSERVER_CONFIG_FILE: join(ROOT, 'config/config.yaml') } })
  .notification_backend.in_memory.state_directory;

function stage(name: string): Stage {
  const found = dockerfile.stages.find((s) => s.name === name);
  if (!found) throw new Error(`Dockerfile has no stage '${name}'`);
  return found;
}

function resolvedBase(s: Stage): string {
  return s.base.replace(/\$\{?(\w+)\}?/g, (_m, name: string) => dockerfile.globalArgs.get(name) ?? '');
}

function all(s: Stage, keyword: string): string[] {
  return s.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
}

function last(s: Stage, keyword: string): string | undefined {
  return all(s, keyword).at(-1);
}

interface Copy {
  readonly from: string | undefined;
  readonly sources: string[];
  readonly destination: string;
}

/** COPY instructions with the destination made absolute against the stage's WORKDIR at that point. */
function copies(s: Stage): Copy[] {
  let workdir = '/';
  const result: Copy[] = [];
  for (const instruction of s.instructions) {
    if (instruction.keyword === 'WORKDIR') workdir = posix.resolve(workdir, instruction.args);
    if (instruction.keyword !== 'COPY') continue;
    const words = instruction.args.split(/\s+/);
    const flags = words.filter((w) => w.startsWith('--'));
    const paths = words.filter((w) => !w.startsWith('--'));
    const from = flags
      .find((f) => f.startsWith('--from='))
      ?.slice('--from='.length)
      .toLowerCase();
    const destination = paths.at(-1) ?? '';
    result.push({ from, sources: paths.slice(0, -1), destination: posix.resolve(workdir, destination) });
  }
  return result;
}

describe('Dockerfile (docs/design/rules/operations.md §5.2)', () => {
  const release = stage('release');

  it('builds from a slim Node 20 image in several stages, with release and debug targets', () => {
    expect(dockerfile.stages.length).toBeGreaterThanOrEqual(3);
    expect(resolvedBase(release)).toMatch(/^node:20[-.\w]*-slim$/);
    const debug = stage('debug');
    expect(debug.base === 'release' || /^node:20[-.\w]*-slim$/.test(resolvedBase(debug)), `debug FROM ${debug.base}`).toBe(true);
  });

  it('compiles TypeScript in a build stage', () => {
    const builders = dockerfile.stages.filter((s) => all(s, 'RUN').some((run) => /npm run build|tsc\b/.test(run)));
    expect(builders.length).toBeGreaterThan(0);
    for (const builder of builders) expect(all(builder, 'RUN').some((run) => /npm ci\b/.test(run))).toBe(true);
  });

  it('release: WORKDIR /app, non-root USER', () => {
    expect(last(release, 'WORKDIR')).toBe('/app');
    const user = last(release, 'USER');
    expect(user, 'release sets a USER').toBeDefined();
    expect((user ?? '').split(':')[0]).not.toMatch(/^(root|0)$/);
  });

  it("release: the sequence journal's directory (D40) is a volume the non-root user owns, writable with a read-only root filesystem", () => {
    const workdir = last(release, 'WORKDIR') ?? '/';
    const directory = posix.resolve(workdir, CONFIG_DEFAULTS_STATE_DIRECTORY);
    const volumes = all(release, 'VOLUME').flatMap((args) => (args.startsWith('[') ? (JSON.parse(args) as string[]) : args.split(/\s+/)));
    expect(volumes).toContain(directory);
    const user = (last(release, 'USER') ?? '').split(':')[0];
    expect(all(release, 'RUN').some((run) => run.includes(`chown ${user}`) && run.includes(directory))).toBe(true);
  });

  it('release: EXPOSE 8000 9090', () => {
    const exposed = all(release, 'EXPOSE')
      .flatMap((args) => args.split(/\s+/))
      .map((port) => port.replace(/\/tcp$/, ''));
    expect(exposed).toEqual(expect.arrayContaining(['8000', '9090']));
  });

  it('release: a HEALTHCHECK on /health', () => {
    const healthcheck = last(release, 'HEALTHCHECK');
    expect(healthcheck).toBeDefined();
    expect(healthcheck).not.toMatch(/^NONE$/i);
    expect(healthcheck).toMatch(/\bCMD\b/);
    expect(healthcheck).toMatch(/127\.0\.0\.1:'\+\(process\.env\.AVISOSERVER_APPLICATION__PORT\|\|8000\)\+'\/health/);
  });

  it('release: exec-form ENTRYPOINT running the compiled server, so node receives SIGTERM', () => {
    const entrypoint = last(release, 'ENTRYPOINT') ?? '';
    let argv: unknown;
    expect(() => (argv = JSON.parse(entrypoint)), `ENTRYPOINT ${entrypoint} is not exec form`).not.toThrow();
    expect(Array.isArray(argv)).toBe(true);
    const words = argv as string[];
    expect(words.some((word) => /(^|\/)(node|tini)$/.test(word))).toBe(true);
    expect(words.some((word) => posix.resolve('/app', word) === posix.resolve('/app', PACKAGE.main))).toBe(true);
    expect(all(release, 'CMD').every((cmd) => cmd.startsWith('['))).toBe(true);
    const stopSignal = last(release, 'STOPSIGNAL');
    if (stopSignal !== undefined) expect(stopSignal).toBe('SIGTERM');
  });

  it('release: copies only production dependencies and the compiled code, not the whole context', () => {
    expect(all(release, 'RUN').filter((run) => /npm (ci|install)\b/.test(run) && !/--omit[= ]dev|--production/.test(run))).toEqual([]);
    const releaseCopies = copies(release);
    expect(releaseCopies.filter((c) => c.from === undefined && c.sources.some((src) => src === '.' || src === './'))).toEqual([]);
    const modules = releaseCopies.filter((c) => c.sources.some((src) => src.endsWith('node_modules')));
    expect(modules.length).toBe(1);
    const depsStage = stage(modules[0]?.from ?? '');
    expect(all(depsStage, 'RUN').some((run) => /npm ci\b.*--omit[= ]dev|npm ci\b.*--production/.test(run))).toBe(true);
    expect(modules[0]?.destination).toBe('/app/node_modules');
    expect(
      releaseCopies.some((c) => c.from !== undefined && c.sources.some((src) => src.endsWith('dist')) && c.destination === '/app/dist'),
    ).toBe(true);
    expect(releaseCopies.some((c) => c.sources.includes('package.json'))).toBe(true);
  });

  it('release: static files at /app/static and the default config at /app/config/config.yaml', () => {
    const releaseCopies = copies(release);
    const staticCopy = releaseCopies.find((c) => c.from === undefined && c.sources.some((src) => src.replace(/\/$/, '') === 'static'));
    expect(staticCopy?.destination).toBe('/app/static');
    const configCopy = releaseCopies.find((c) => c.from === undefined && c.sources.includes('config/config.yaml'));
    expect(configCopy?.destination).toBe('/app/config/config.yaml');
    expect(existsSync(join(ROOT, 'static', 'index.html'))).toBe(true);
    expect(readFileSync(join(ROOT, 'static', 'index.html'), 'utf8')).toContain('{{SERVER_VERSION}}');
  });

  it('build: compiles the operator console with the server (build:server), from console/', () => {
    const build = stage('build');
    const consoleCopy = copies(build).find((c) => c.from === undefined && c.sources.some((src) => src.replace(/\/$/, '') === 'console'));
    expect(consoleCopy?.destination).toBe('/build/console');
    const buildIndex = build.instructions.findIndex((i) => i.keyword === 'RUN' && /npm run build:server/.test(i.args));
    const copyIndex = build.instructions.findIndex((i) => i.keyword === 'COPY' && /^console\b/.test(i.args));
    expect(copyIndex).toBeGreaterThanOrEqual(0);
    expect(copyIndex).toBeLessThan(buildIndex);
    const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts['build:server']).toContain('npm run build:console');
    expect(scripts['build:console']).toContain('tsc -p console/tsconfig.json');
  });

  it('release: OCI labels, the VERSION argument defaulting to the package version, no baked-in secrets', () => {
    const labels = all(release, 'LABEL').join(' ');
    for (const label of ['version', 'title', 'source', 'licenses']) expect(labels).toContain(`org.opencontainers.image.${label}=`);
    const version = all(release, 'ARG').find((arg) => arg.startsWith('VERSION'));
    expect(version).toBe(`VERSION=${PACKAGE.version}`);
    const env = all(release, 'ENV').join(' ');
    expect(env).not.toMatch(/TOKEN|SECRET|PASSWORD/i);
  });
});

describe('.dockerignore (docs/design/rules/operations.md §5.2 item 8)', () => {
  const patterns = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));

  it('excludes node_modules, .git, .env* and local NATS data', () => {
    expect(patterns).toEqual(expect.arrayContaining(['node_modules', '.git', '.env*', 'nats_config']));
  });

  it('keeps what the image build needs', () => {
    for (const needed of [
      'package.json',
      'package-lock.json',
      'tsconfig.json',
      'tsconfig.build.json',
      'src',
      'scripts',
      'static',
      'config',
      'console',
    ]) {
      expect(
        patterns.filter((pattern) => pattern.replace(/^\/|\/$/g, '') === needed || pattern === `${needed}/**`),
        needed,
      ).toEqual([]);
    }
  });
});
