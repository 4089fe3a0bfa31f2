import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AppConfigSchema } from '../../../src/config/model.js';
import { CONFIG_REFERENCE_MARKDOWN_PATH } from '../../../scripts/config-reference/reference.js';
import { IDENTIFIER_RULES } from '../../../src/schema/identifier-rule.js';

interface Node {
  readonly properties?: Record<string, Node>;
  readonly patternProperties?: Record<string, Node>;
  readonly additionalProperties?: Node | boolean;
  readonly anyOf?: readonly Node[];
}

/** Every field name anywhere in the model, nested sections and identifier rules included. */
function fieldNames(node: Node, into = new Set<string>()): Set<string> {
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    into.add(name);
    fieldNames(child, into);
  }
  for (const child of Object.values(node.patternProperties ?? {})) fieldNames(child, into);
  if (typeof node.additionalProperties === 'object') fieldNames(node.additionalProperties, into);
  for (const child of node.anyOf ?? []) fieldNames(child, into);
  return into;
}

describe('docs/configuration.md', () => {
  const reference = readFileSync(CONFIG_REFERENCE_MARKDOWN_PATH, 'utf8');
  const names = fieldNames(AppConfigSchema as unknown as Node);
  for (const rule of Object.values(IDENTIFIER_RULES)) fieldNames(rule as unknown as Node, names);

  it('has every key of the configuration model', () => {
    const missing = [...names].filter((name) => !reference.includes(`\`${name}\``));
    expect(missing).toEqual([]);
    expect(names.size).toBeGreaterThan(50);
  });
});
