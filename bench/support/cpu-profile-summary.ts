import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { ROOT } from './paths.js';

/**
 * Summarises a `.cpuprofile` written by `node --cpu-prof` (e.g. from `npm run bench -- --profile`):
 * self time per function, and the share of time spent under each function (inclusive), as
 * percentages of the sampled time. Usage: node dist/bench/support/cpu-profile-summary.js FILE [TOP]
 */
interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

function label(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url.startsWith('file://') ? relative(ROOT, new URL(url).pathname) : url;
  return `${functionName || '(anonymous)'} ${file ? `${file}:${lineNumber + 1}` : ''}`.trim();
}

export function summarise(profile: CpuProfile, top: number): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const selfTime = new Map<number, number>();
  let total = 0;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    selfTime.set(id, (selfTime.get(id) ?? 0) + delta);
    total += delta;
  });
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, time] of selfTime) {
    const node = byId.get(id) as ProfileNode;
    self.set(label(node), (self.get(label(node)) ?? 0) + time);
    // Each function counted once per sample even when it recurses.
    const seen = new Set<string>();
    for (let current: number | undefined = id; current !== undefined; current = parent.get(current)) {
      const name = label(byId.get(current) as ProfileNode);
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + time);
    }
  }
  const idle = [...self].filter(([name]) => name.startsWith('(idle)')).reduce((sum, [, time]) => sum + time, 0);
  const busy = total - idle;
  const rows = (map: Map<string, number>): string[] =>
    [...map]
      .filter(([name]) => !name.startsWith('(idle)') && !name.startsWith('(root)') && !name.startsWith('(program)'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, time]) => `${((100 * time) / busy).toFixed(1).padStart(5)}%  ${name}`);
  return [
    `sampled ${(total / 1e6).toFixed(1)} s, busy ${(busy / 1e6).toFixed(1)} s (${((100 * busy) / total).toFixed(0)}%); percentages of busy time`,
    '',
    'self time:',
    ...rows(self),
    '',
    'inclusive time:',
    ...rows(inclusive),
  ].join('\n');
}

const [file, top] = process.argv.slice(2);
if (file === undefined) {
  process.stderr.write('usage: node dist/bench/support/cpu-profile-summary.js FILE.cpuprofile [TOP]\n');
  process.exit(2);
}
process.stdout.write(`${summarise(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, Number(top ?? 25))}\n`);
