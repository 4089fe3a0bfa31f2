import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ROOT } from './deploy-tools.js';

/** The PromQL of deploy/: every alert rule and every dashboard target, as the tests evaluate them. */

export const RULE_FILES = [
  'deploy/prometheus/rules/aviso-ts.rules.yml',
  'deploy/prometheus/opt-in/notification-silence.rules.yml',
] as const;
export const RULE_TEST_FILES = [
  'deploy/prometheus/tests/aviso-ts.rules.test.yml',
  'deploy/prometheus/tests/notification-silence.rules.test.yml',
] as const;
export const DASHBOARD_FILE = 'deploy/grafana/aviso-ts.json';

export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  readonly for?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
}

export function alertRules(file: string): AlertRule[] {
  const rules = parse(readFileSync(join(ROOT, file), 'utf8')) as { groups: { rules: AlertRule[] }[] };
  return rules.groups.flatMap((group) => group.rules);
}

export function allAlertRules(): AlertRule[] {
  return RULE_FILES.flatMap((file) => alertRules(file));
}

export interface DashboardPanel {
  readonly id: number;
  readonly type: string;
  readonly title: string;
  readonly gridPos: { h: number; w: number; x: number; y: number };
  readonly targets?: { refId: string; expr: string; legendFormat?: string }[];
}

export interface Dashboard {
  readonly uid: string;
  readonly title: string;
  readonly panels: DashboardPanel[];
  readonly templating: {
    list: { name: string; type: string; query?: unknown; allValue?: string; includeAll?: boolean; multi?: boolean }[];
  };
}

export function dashboard(): Dashboard {
  return JSON.parse(readFileSync(join(ROOT, DASHBOARD_FILE), 'utf8')) as Dashboard;
}

/** Every target of the dashboard with the panel it belongs to. */
export function dashboardQueries(): { panel: string; expr: string }[] {
  return dashboard().panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })));
}

/** A dashboard expression as Grafana would send it, with every instance selected and a fixed rate window. */
export function withDashboardVariables(expr: string, rateInterval = '1m'): string {
  return expr.replaceAll('$__rate_interval', rateInterval).replaceAll('$instance', '.*');
}

/**
 * The alert expression with each comparison turned into a `bool` one (`> 0.8` → `> bool 0.8`):
 * where the alert would filter its series away, this keeps them with 0 or 1, so evaluating it
 * proves the metrics it watches exist, whether or not the alert would fire now. Comparisons inside
 * label matchers (`{status!="success"}`) and strings are left alone.
 */
export function asBoolComparisons(expr: string): string {
  let out = '';
  let braces = 0;
  let quote: string | undefined;
  for (let i = 0; i < expr.length; i++) {
    const char = expr[i] as string;
    if (quote) {
      out += char;
      if (char === '\\') out += expr[++i] ?? '';
      else if (char === quote) quote = undefined;
      continue;
    }
    if (char === '"' || char === "'" || char === '`') quote = char;
    else if (char === '{') braces++;
    else if (char === '}') braces--;
    const operator = braces === 0 ? /^(==|!=|>=|<=|>|<)/.exec(expr.slice(i))?.[0] : undefined;
    if (operator) {
      out += operator;
      i += operator.length - 1;
      if (!/^\s*bool\b/.test(expr.slice(i + 1))) out += ' bool';
      continue;
    }
    out += char;
  }
  return out;
}

const PROMQL_KEYWORDS = new Set([
  'sum',
  'by',
  'without',
  'rate',
  'increase',
  'histogram_quantile',
  'and',
  'or',
  'unless',
  'on',
  'ignoring',
  'bool',
  'count',
  'max',
  'min',
  'avg',
  'offset',
  'le',
  'group_left',
  'group_right',
  'vector',
  'scalar',
  'changes',
]);

/** The metric names an expression reads (label names of matchers and grouping clauses excluded). */
export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  const names = new Set<string>();
  for (const match of stripped.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()/g)) {
    const name = match[1] as string;
    if (!PROMQL_KEYWORDS.has(name) && name.includes('_')) names.add(name);
  }
  return [...names];
}
