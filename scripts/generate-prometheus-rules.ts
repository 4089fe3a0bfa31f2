import fs from 'node:fs';
import path from 'node:path';
import { PROMETHEUS_RULE_SOURCES, renderPrometheusRule } from './prometheus-rules.js';

/** Writes the PrometheusRule objects of deploy/prometheus/ from its rules files (`npm run deploy:generate`). */
const root = path.resolve(process.argv[2] ?? process.cwd());
for (const source of PROMETHEUS_RULE_SOURCES) {
  fs.writeFileSync(path.join(root, source.output), renderPrometheusRule(root, source));
  console.log(`wrote ${source.output}`);
}
