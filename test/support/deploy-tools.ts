import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';

/**
 * The real tools the deploy/ tests drive: Debian's kubectl (its built-in kustomize) and
 * Prometheus's promtool. A missing tool is a loud failure that says how to install it, never a
 * skipped test: `npm test` (scripts/test-prerequisites.sh) installs both as root on Debian.
 */

export const ROOT = resolve(import.meta.dirname, '../..');

export interface ToolResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

const INSTALL_HINTS: Record<string, string> = {
  kubectl: "Debian's kubectl (`apt-get install -y kubernetes-client`)",
  promtool: "Debian's Prometheus (`apt-get install -y --no-install-recommends prometheus`)",
  prometheus: "Debian's Prometheus (`apt-get install -y --no-install-recommends prometheus`)",
  'nats-server': 'nats-server (`apt-get install -y nats-server`)',
};

/** Runs `tool` with `args`; throws with the install instructions when the tool is not installed. */
export function runTool(
  tool: string,
  args: readonly string[],
  options: { cwd?: string; input?: string; env?: NodeJS.ProcessEnv } = {},
): ToolResult {
  const result = spawnSync(tool, args, {
    cwd: options.cwd ?? ROOT,
    encoding: 'utf8',
    timeout: 120_000,
    maxBuffer: 64 * 1024 * 1024,
    ...(options.input === undefined ? {} : { input: options.input }),
    ...(options.env === undefined ? {} : { env: options.env }),
  });
  if (result.error && (result.error as NodeJS.ErrnoException).code === 'ENOENT') {
    throw new Error(
      `${tool} is not installed, so the deploy/ files cannot be checked with it. Install ${INSTALL_HINTS[tool] ?? tool}, ` +
        'or run `npm test` as root on Debian, which installs it.',
    );
  }
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A Kubernetes object as rendered: enough shape for the assertions, the validator checks the rest. */
export interface KubernetesObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly labels?: Record<string, string>; readonly annotations?: Record<string, string> };
  readonly [field: string]: unknown;
}

/** `kubectl kustomize <dir>`, parsed into its objects; a render error fails with kubectl's message. */
export function kustomize(dir: string): KubernetesObject[] {
  const result = runTool('kubectl', ['kustomize', dir]);
  if (result.status !== 0) throw new Error(`kubectl kustomize ${dir} failed (${result.status}): ${result.stderr}`);
  return parseAllDocuments(result.stdout)
    .map((document) => document.toJS() as KubernetesObject | null)
    .filter((object): object is KubernetesObject => object !== null);
}

/** The client version kubectl reports, e.g. `v1.20.2`, for the test names. */
export function kubectlVersion(): string {
  const output = runTool('kubectl', ['version', '--client']).stdout;
  return /GitVersion:"([^"]+)"/.exec(output)?.[1] ?? /Client Version:\s*(v\S+)/.exec(output)?.[1] ?? 'unknown';
}
