import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  CONFIG_JSON_SCHEMA_PATH,
  CONFIG_REFERENCE_MARKDOWN_PATH,
  renderConfigReference,
} from '../../../scripts/config-reference/reference.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const REGENERATE = 'regenerate with: npm run build && node dist/scripts/generate-config-reference.js';

describe('generated configuration reference', () => {
  const rendered = renderConfigReference();

  it(`${CONFIG_REFERENCE_MARKDOWN_PATH} is up to date with the model`, () => {
    const committed = fs.readFileSync(path.join(REPO, CONFIG_REFERENCE_MARKDOWN_PATH), 'utf8');
    expect(committed, REGENERATE).toBe(rendered.markdown);
  });

  it(`${CONFIG_JSON_SCHEMA_PATH} is up to date with the model`, () => {
    const committed = fs.readFileSync(path.join(REPO, CONFIG_JSON_SCHEMA_PATH), 'utf8');
    expect(committed, REGENERATE).toBe(rendered.jsonSchema);
  });

  it('documents every section of the model', () => {
    for (const heading of [
      '### `application`',
      '### `logging`',
      '### `auth`',
      '### `ecpds`',
      '### `metrics`',
      '### `notification_backend.in_memory`',
      '### `notification_backend.jetstream`',
      '### `notification_schema.<event_type>`',
      '### `notification_schema.<event_type>.identifier.<field>` (`type: PointCloudHandler`)',
      '### `notification_schema.<event_type>.storage_policy`',
      '### `watch_endpoint`',
    ]) {
      expect(rendered.markdown).toContain(heading);
    }
  });

  it('marks defaulted fields optional in the file schema', () => {
    const schema = JSON.parse(rendered.jsonSchema) as {
      required: string[];
      properties: { application: { required: string[] }; watch_endpoint: { required?: string[] } };
    };
    expect(schema.required).toEqual(['application', 'notification_backend']);
    expect(schema.properties.application.required).toEqual(['host', 'port']);
    expect(schema.properties.watch_endpoint.required).toBeUndefined();
  });
});
