import fs from 'node:fs';
import path from 'node:path';
import { CONFIG_JSON_SCHEMA_PATH, CONFIG_REFERENCE_MARKDOWN_PATH, renderConfigReference } from './config-reference/reference.js';

/**
 * Writes docs/configuration.md and schemas/config.schema.json from the configuration model.
 * Run from the repository root after a build: `node dist/scripts/generate-config-reference.js`
 * (an optional argument names another root). test/unit/config/reference.test.ts fails while the
 * committed files differ from a fresh rendering.
 */
const root = path.resolve(process.argv[2] ?? process.cwd());
const { markdown, jsonSchema } = renderConfigReference();
for (const [relative, content] of [
  [CONFIG_REFERENCE_MARKDOWN_PATH, markdown],
  [CONFIG_JSON_SCHEMA_PATH, jsonSchema],
] as const) {
  const file = path.join(root, relative);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
  console.log(`wrote ${relative}`);
}
