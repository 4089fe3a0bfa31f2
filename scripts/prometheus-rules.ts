import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';

/**
 * The PrometheusRule objects of deploy/prometheus/, rendered from the plain rules files that the
 * compose `monitoring` profile loads, so both deployments run the same rules from one source.
 * `npm run deploy:generate` writes them; test/unit/deploy/prometheus-rules.test.ts fails while a
 * committed one differs from a fresh rendering.
 */
export interface PrometheusRuleSource {
  /** The plain rules file, relative to the repository root. */
  readonly rulesFile: string;
  /** The PrometheusRule written beside it, relative to the repository root. */
  readonly output: string;
  readonly name: string;
}

export const PROMETHEUS_RULE_SOURCES: readonly PrometheusRuleSource[] = [
  { rulesFile: 'deploy/prometheus/rules/aviso-ts.rules.yml', output: 'deploy/prometheus/prometheus-rule.yaml', name: 'aviso' },
  {
    rulesFile: 'deploy/prometheus/opt-in/notification-silence.rules.yml',
    output: 'deploy/prometheus/opt-in/prometheus-rule.yaml',
    name: 'aviso-notification-silence',
  },
];

export function renderPrometheusRule(root: string, source: PrometheusRuleSource): string {
  const rules = parse(readFileSync(join(root, source.rulesFile), 'utf8')) as { groups: unknown[] };
  const resource = {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: {
      name: source.name,
      labels: { 'app.kubernetes.io/name': 'aviso-ts', 'app.kubernetes.io/component': 'server' },
    },
    spec: { groups: rules.groups },
  };
  return (
    `# Generated from ${source.rulesFile} by \`npm run deploy:generate\`: edit that file, not this one.\n` +
    '# A Prometheus Operator selects PrometheusRules by label: add the one yours expects\n' +
    '# (kube-prometheus-stack: `release: <its release name>`).\n' +
    stringify(resource, { lineWidth: 0 })
  );
}
