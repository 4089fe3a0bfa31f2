import { writeFileSync } from 'node:fs';
import type { RunMeta } from './machine.js';
import type { Measurement } from './scenario.js';

/** The outcome of one scenario: its measurement, or why it could not be measured. */
export type Outcome =
  | { readonly name: string; readonly target: string; readonly measurement: Measurement }
  | { readonly name: string; readonly target: string; readonly error: string };

/** `ok` target met · `MISS` target missed · `FAIL` correctness problem · `ERROR` not measured. */
export function verdict(outcome: Outcome): 'ok' | 'MISS' | 'FAIL' | 'ERROR' {
  if ('error' in outcome) return 'ERROR';
  if (outcome.measurement.problems.length > 0) return 'FAIL';
  return outcome.measurement.pass ? 'ok' : 'MISS';
}

function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Math.abs(value) >= 1000) return Math.round(value).toLocaleString('en-US');
  return String(Number(value.toPrecision(4)));
}

export function renderTable(outcomes: readonly Outcome[]): string {
  const header = ['scenario', 'value', 'unit', 'baseline', 'ratio', 'target', 'result', 'details'];
  const rows = outcomes.map((outcome) => {
    if ('error' in outcome)
      return [outcome.name, '-', '-', '-', '-', outcome.target, 'ERROR', outcome.error.split('\n')[0]?.slice(0, 100) ?? ''];
    const m = outcome.measurement;
    return [
      outcome.name,
      formatNumber(m.value),
      m.unit,
      formatNumber(m.baseline),
      Number.isFinite(m.ratio) ? m.ratio.toFixed(3) : '–',
      outcome.target,
      verdict(outcome),
      m.summary,
    ];
  });
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] as string).length)));
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((cell, column) => (column === 0 || column === 2 || column >= 5 ? cell.padEnd(widths[column] as number) : cell.padStart(widths[column] as number))).join(' | ')} |`;
  const rule = `|${widths.map((width, column) => (column === 0 || column === 2 || column >= 5 ? `:${'-'.repeat(width + 1)}` : `${'-'.repeat(width + 1)}:`)).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** Problems and errors, one line each, for under the table. */
export function renderNotes(outcomes: readonly Outcome[]): string[] {
  const notes: string[] = [];
  for (const outcome of outcomes) {
    if ('error' in outcome) notes.push(`${outcome.name}: ERROR ${outcome.error}`);
    else for (const problem of outcome.measurement.problems) notes.push(`${outcome.name}: FAIL ${problem}`);
  }
  return notes;
}

export function writeResults(file: string, outcomes: readonly Outcome[], meta: RunMeta): void {
  const results: Record<string, unknown> = {};
  for (const outcome of outcomes) {
    if ('error' in outcome) {
      results[outcome.name] = {
        value: null,
        unit: null,
        baseline: null,
        ratio: null,
        target: outcome.target,
        result: 'ERROR',
        error: outcome.error,
      };
      continue;
    }
    const { value, unit, baseline, ratio, problems, summary, extra } = outcome.measurement;
    results[outcome.name] = { value, unit, baseline, ratio, target: outcome.target, result: verdict(outcome), summary, problems, ...extra };
  }
  results._meta = meta;
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
}
