import { setTimeout as sleep } from 'node:timers/promises';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { reapOnExit } from './child-reaper.js';
import { findFreePort, locateNatsServer, probeNats } from './nats-server.js';

/**
 * A private JetStream cluster of `nats-server` processes on loopback, for fault tests: each node
 * has its own client, route and monitoring port, its own store and a small config file (NATS 2.9
 * needs a server name per node and a cluster name for clustered JetStream). A node can be killed
 * and restarted with the same ports and store; the whole cluster is removed by `stop`.
 */

const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;
const OUTPUT_TAIL_CHARS = 16_000;
const CLUSTER_NAME = 'aviso_test';

export interface ClusterNode {
  readonly name: string;
  readonly port: number;
  readonly url: string;
  readonly monitorPort: number;
  readonly isRunning: boolean;
  /** Simulates a crash (SIGKILL); the store is kept. */
  kill(): Promise<void>;
  /** Starts the node again with the same config and store (after `kill`). */
  restart(): Promise<void>;
  output(): string;
}

export interface NatsCluster {
  readonly nodes: readonly ClusterNode[];
  /** Every node's client URL, comma-separated (the form `nats_url` accepts for several servers). */
  readonly urls: string;
  /** Name of the node a client with this connection name is connected to, if any running node has it. */
  nodeServing(connectionName: string): Promise<ClusterNode | undefined>;
  /** Runs `action` with a JetStream manager connected to the running nodes. */
  withManager<T>(action: (jsm: JetStreamManager, nc: NatsConnection) => Promise<T>): Promise<T>;
  /** Name of the server leading the stream's replica group. */
  streamLeader(stream: string): Promise<string | undefined>;
  stop(): Promise<void>;
}

interface NodePorts {
  readonly name: string;
  readonly port: number;
  readonly routePort: number;
  readonly monitorPort: number;
}

/** Starts `size` clustered nodes and resolves once the cluster can place an R`size` stream. */
export async function startNatsCluster(size = 3): Promise<NatsCluster> {
  const binary = locateNatsServer();
  const root = mkdtempSync(join(tmpdir(), 'aviso-nats-cluster-'));
  const ports: NodePorts[] = [];
  for (let i = 1; i <= size; i++) {
    ports.push({
      name: `n${i}_${process.pid}`,
      port: await findFreePort(),
      routePort: await findFreePort(),
      monitorPort: await findFreePort(),
    });
  }
  const routes = ports.map((p) => `"nats-route://127.0.0.1:${p.routePort}"`).join(', ');
  const nodes = ports.map((p) => {
    const store = join(root, p.name);
    mkdirSync(store);
    const configFile = join(root, `${p.name}.conf`);
    writeFileSync(
      configFile,
      [
        `server_name: "${p.name}"`,
        `listen: "127.0.0.1:${p.port}"`,
        `http: "127.0.0.1:${p.monitorPort}"`,
        `jetstream { store_dir: "${store}" }`,
        `cluster {`,
        `  name: "${CLUSTER_NAME}"`,
        `  listen: "127.0.0.1:${p.routePort}"`,
        `  routes: [${routes}]`,
        `}`,
      ].join('\n'),
    );
    return new Node(binary, configFile, p);
  });
  const cluster = new Cluster(nodes, root);
  try {
    await Promise.all(nodes.map((node) => node.start()));
    await cluster.waitUntilReplicated(size);
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}

class Node implements ClusterNode {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private tail = '';
  readonly name: string;
  readonly port: number;
  readonly monitorPort: number;

  constructor(
    private readonly binary: string,
    private readonly configFile: string,
    ports: NodePorts,
  ) {
    this.name = ports.name;
    this.port = ports.port;
    this.monitorPort = ports.monitorPort;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  get isRunning(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  output(): string {
    return this.tail;
  }

  async start(): Promise<void> {
    const child = spawn(this.binary, ['-c', this.configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
    reapOnExit(child);
    const append = (chunk: Buffer) => {
      this.tail = (this.tail + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
    };
    child.stdout?.on('data', append);
    child.stderr?.on('data', append);
    let exitReason: string | undefined;
    this.exited = new Promise<void>((resolveExit) => {
      child.once('exit', (code, signal) => {
        exitReason = signal ?? String(code);
        resolveExit();
      });
      child.once('error', (error) => {
        exitReason = error.message;
        resolveExit();
      });
    });
    this.child = child;
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      if (exitReason !== undefined) throw new Error(`nats-server ${this.name} exited (${exitReason}); output:\n${this.tail}`);
      try {
        const info = await probeNats('127.0.0.1', this.port, 1_000);
        if (info.serverName === this.name) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`nats-server ${this.name} did not listen on ${this.port}; output:\n${this.tail}`);
      await sleep(25);
    }
  }

  async kill(): Promise<void> {
    await this.terminate('SIGKILL');
  }

  async restart(): Promise<void> {
    await this.terminate('SIGTERM');
    await this.start();
  }

  async terminate(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return this.exited;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    try {
      await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

class Cluster implements NatsCluster {
  constructor(
    readonly nodes: readonly Node[],
    private readonly root: string,
  ) {}

  get urls(): string {
    return this.nodes.map((node) => node.url).join(',');
  }

  async withManager<T>(action: (jsm: JetStreamManager, nc: NatsConnection) => Promise<T>): Promise<T> {
    const servers = this.nodes.filter((node) => node.isRunning).map((node) => node.url);
    const nc = await connect({ servers, name: 'aviso-test-admin', timeout: 5_000 });
    try {
      return await action(await jetstreamManager(nc, { timeout: 5_000 }), nc);
    } finally {
      await nc.close();
    }
  }

  async streamLeader(stream: string): Promise<string | undefined> {
    return this.withManager(async (jsm) => (await jsm.streams.info(stream)).cluster?.leader);
  }

  async nodeServing(connectionName: string): Promise<ClusterNode | undefined> {
    for (const node of this.nodes.filter((n) => n.isRunning)) {
      const response = await fetch(`http://127.0.0.1:${node.monitorPort}/connz?limit=1024`);
      const body = (await response.json()) as { connections?: { name?: string }[] };
      if (body.connections?.some((c) => c.name === connectionName)) return node;
    }
    return undefined;
  }

  /** Clustered JetStream is usable once a meta leader exists and every peer can take a replica. */
  async waitUntilReplicated(replicas: number): Promise<void> {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    let lastError: string;
    for (;;) {
      try {
        await this.withManager(async (jsm) => {
          await jsm.streams.add({
            name: 'CLUSTER_READY_PROBE',
            subjects: ['cluster_ready_probe.>'],
            num_replicas: replicas,
            storage: 'memory',
          });
          await jsm.streams.delete('CLUSTER_READY_PROBE');
        });
        return;
      } catch (error) {
        lastError = error instanceof Error ? error.message : String(error);
      }
      if (Date.now() > deadline) {
        throw new Error(
          `the NATS cluster could not place an R${replicas} stream within ${READY_TIMEOUT_MS} ms (${lastError}); ` +
            `output of the first node:\n${this.nodes[0]?.output() ?? ''}`,
        );
      }
      await sleep(250);
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.terminate('SIGTERM')));
    rmSync(this.root, { recursive: true, force: true });
  }
}
