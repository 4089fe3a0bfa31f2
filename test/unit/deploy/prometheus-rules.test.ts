import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PROMETHEUS_RULE_SOURCES, renderPrometheusRule } from '../../../scripts/prometheus-rules.js';
import {
  RULE_FILES,
  RULE_TEST_FILES,
  allAlertRules,
  asBoolComparisons,
  dashboard,
  dashboardQueries,
  metricNames,
} from '../../support/deploy-queries.js';
import { ROOT, runTool } from '../../support/deploy-tools.js';

/**
 * deploy/prometheus and deploy/grafana checked by the real tools and against the docs:
 * `promtool check rules`, `promtool test rules` (a unit test per alert, firing and not firing),
 * `promtool check config` of the compose Prometheus; every metric a rule or a panel reads is one
 * docs/metrics.md documents; every alert has its runbook in docs/operations.md. That the queries
 * return series from a real server is test/e2e/prometheus-monitoring.test.ts.
 */

const temporary: string[] = [];
afterAll(() => {
  for (const dir of temporary.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function promtool(args: readonly string[], cwd = ROOT) {
  return runTool('promtool', args, { cwd });
}

interface RuleTestFile {
  readonly rule_files: string[];
  readonly tests: { name?: string; alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[] }[];
}

describe('alert rules (promtool)', () => {
  it.each(RULE_FILES)('promtool check rules %s', (file) => {
    const result = promtool(['check', 'rules', file]);
    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(/SUCCESS: \d+ rules found/);
  });

  it.each(RULE_TEST_FILES)('promtool test rules %s', (file) => {
    const result = promtool(['test', 'rules', file]);
    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('SUCCESS');
  });

  it('has a unit test per alert where it fires and one where it does not', () => {
    const cases = new Map<string, { fires: number; silent: number }>();
    for (const file of RULE_TEST_FILES) {
      const tests = parse(readFileSync(join(ROOT, file), 'utf8')) as RuleTestFile;
      for (const test of tests.tests) {
        for (const check of test.alert_rule_test ?? []) {
          const entry = cases.get(check.alertname) ?? { fires: 0, silent: 0 };
          if ((check.exp_alerts ?? []).length > 0) entry.fires++;
          else entry.silent++;
          cases.set(check.alertname, entry);
        }
      }
    }
    const alerts = allAlertRules()
      .map((rule) => rule.alert)
      .sort();
    expect([...cases.keys()].sort()).toEqual(alerts);
    for (const alert of alerts) {
      expect(cases.get(alert)?.fires, `${alert} firing`).toBeGreaterThan(0);
      expect(cases.get(alert)?.silent, `${alert} not firing`).toBeGreaterThan(0);
    }
  });

  it('the unit tests fail when a rule is broken (they check the thresholds, not only the syntax)', () => {
    const copy = mkdtempSync(join(tmpdir(), 'aviso-rules-'));
    temporary.push(copy);
    cpSync(join(ROOT, 'deploy/prometheus'), copy, { recursive: true });
    const file = join(copy, 'rules/aviso-ts.rules.yml');
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace(
        'aviso_sse_buffered_bytes / aviso_sse_max_total_buffered_bytes > 0.8',
        'aviso_sse_buffered_bytes / aviso_sse_max_total_buffered_bytes > 0.95',
      ),
    );
    const result = promtool(['test', 'rules', 'tests/aviso-ts.rules.test.yml'], copy);
    expect(result.status).not.toBe(0);
    expect(result.stdout + result.stderr).toContain('AvisoStreamBuffersNearLimit');
  });

  it('every alert has a severity, a summary and a runbook in docs/operations.md', () => {
    const operations = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
    const headings = new Set([...operations.matchAll(/^#{2,4} (.+)$/gm)].map((m) => (m[1] as string).trim()));
    for (const rule of allAlertRules()) {
      expect(['critical', 'warning'], rule.alert).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary, rule.alert).toBeTruthy();
      expect(rule.annotations?.runbook_url).toBe(`docs/operations.md#${rule.alert.toLowerCase()}`);
      expect(headings.has(rule.alert), `a "### ${rule.alert}" runbook heading in docs/operations.md`).toBe(true);
    }
  });

  it('the PrometheusRule files are up to date with the rules files (npm run deploy:generate)', () => {
    for (const source of PROMETHEUS_RULE_SOURCES) {
      expect(readFileSync(join(ROOT, source.output), 'utf8'), `${source.output}: regenerate with npm run deploy:generate`).toBe(
        renderPrometheusRule(ROOT, source),
      );
    }
  });

  it('the compose Prometheus config is valid and loads the rules directory (promtool check config)', () => {
    const config = readFileSync(join(ROOT, 'deploy/prometheus/prometheus.yml'), 'utf8');
    expect(config).toContain('/etc/prometheus/rules/*.yml');
    const dir = mkdtempSync(join(tmpdir(), 'aviso-prometheus-config-'));
    temporary.push(dir);
    // The rules as the container sees them: the compose file mounts deploy/prometheus/rules there.
    const file = join(dir, 'prometheus.yml');
    writeFileSync(file, config.replace('/etc/prometheus/rules', join(ROOT, 'deploy/prometheus/rules')));
    const result = promtool(['check', 'config', file]);
    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(/SUCCESS: 1 rule files found/);
  });
});

describe('asBoolComparisons (how the e2e test evaluates alert expressions)', () => {
  it('turns comparisons into bool ones, outside matchers and strings only', () => {
    expect(asBoolComparisons('a{status!="x>1"} / b > 0.8')).toBe('a{status!="x>1"} / b > bool 0.8');
    expect(asBoolComparisons('a == 0\n  and b >= 20')).toBe('a == bool 0\n  and b >= bool 20');
    expect(asBoolComparisons('a > bool 1')).toBe('a > bool 1');
  });
});

describe('metrics the rules and the dashboard read', () => {
  const documented = readFileSync(join(ROOT, 'docs/metrics.md'), 'utf8');
  /** A histogram's series are documented under its family name. */
  const family = (name: string) => name.replace(/_(bucket|count|sum)$/, '');

  it('finds the metric names of an expression', () => {
    expect(
      metricNames(
        'sum by (le, route) (rate(aviso_http_request_duration_seconds_bucket{route=~"/api/v1/(watch|replay)"}[$__rate_interval]))',
      ),
    ).toEqual(['aviso_http_request_duration_seconds_bucket']);
    expect(metricNames('sum without (route, event_type) (aviso_sse_connections_active) / aviso_sse_max_streams > 0.8').sort()).toEqual([
      'aviso_sse_connections_active',
      'aviso_sse_max_streams',
    ]);
  });

  it('are all documented in docs/metrics.md', () => {
    const expressions = [...allAlertRules().map((rule) => rule.expr), ...dashboardQueries().map((query) => query.expr)];
    const names = new Set(expressions.flatMap((expr) => metricNames(expr)).map(family));
    expect(names.size).toBeGreaterThan(20);
    const undocumented = [...names].filter(
      (name) => !documented.includes(`\`${name}\``) && !(name.startsWith('nodejs_') && documented.includes('`nodejs_*`')),
    );
    expect(undocumented).toEqual([]);
  });
});

describe('deploy/grafana/aviso-ts.json', () => {
  const board = dashboard();

  it('has one instance variable, used by every query', () => {
    const instance = board.templating.list.filter((variable) => variable.name === 'instance');
    expect(instance).toHaveLength(1);
    expect(instance[0]).toMatchObject({ type: 'query', includeAll: true, multi: true, allValue: '.*' });
    expect(JSON.stringify(instance[0]?.query)).toContain('label_values(aviso_build_info, instance)');
    for (const { panel, expr } of dashboardQueries()) {
      // Every selector of every metric is narrowed to the chosen instances.
      const selectors = [...expr.matchAll(/\b([a-z_:][a-z0-9_:]*)\{([^}]*)\}/g)];
      expect(selectors.length, `${panel}: ${expr}`).toBeGreaterThan(0);
      for (const selector of selectors) expect(selector[2], `${panel}: ${selector[0]}`).toContain('instance=~"$instance"');
      for (const name of metricNames(expr)) {
        expect(new RegExp(`\\b${name}\\b(?!\\{)`).test(expr), `${panel}: ${name} without a selector`).toBe(false);
      }
    }
  });

  it('has unique panel ids and panels inside the 24-column grid, none overlapping', () => {
    const ids = board.panels.map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
    const cells = new Set<string>();
    for (const panel of board.panels) {
      const { x, y, w, h } = panel.gridPos;
      expect(x + w, panel.title).toBeLessThanOrEqual(24);
      for (let row = y; row < y + h; row++) {
        for (let column = x; column < x + w; column++) {
          const cell = `${row}:${column}`;
          expect(cells.has(cell), `${panel.title} overlaps at ${cell}`).toBe(false);
          cells.add(cell);
        }
      }
    }
  });

  it('shows what operators need (issue list): notify, streams, deliveries, closes, backend, auth, OTLP, process', () => {
    const read = new Set(
      dashboardQueries()
        .flatMap((query) => metricNames(query.expr))
        .map((name) => name.replace(/_(bucket|count|sum)$/, '')),
    );
    for (const name of [
      'aviso_notifications_total',
      'aviso_http_requests_total',
      'aviso_sse_connections_active',
      'aviso_sse_events_sent_total',
      'aviso_delivery_lag_seconds',
      'aviso_sse_slow_consumer_closes_total',
      'aviso_sse_token_expiry_closes_total',
      'aviso_backend_operation_duration_seconds',
      'aviso_backend_connected',
      'aviso_auth_requests_total',
      'aviso_otlp_export_failures_total',
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_p99_seconds',
    ]) {
      expect(read.has(name), name).toBe(true);
    }
  });
});
