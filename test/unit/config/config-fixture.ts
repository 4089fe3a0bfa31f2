import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../../src/config/load.js';
import type { AppConfig } from '../../../src/config/model.js';

/**
 * Temporary directories standing in for the working directory, $HOME and /etc, so config tests
 * never read or write the real ones. Call `removeSandboxes()` in `afterAll`.
 */

const created: string[] = [];

export interface Sandbox {
  readonly root: string;
  readonly cwd: string;
  readonly home: string;
  readonly systemFile: string;
}

export function sandbox(): Sandbox {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'aviso-config-'));
  created.push(root);
  const cwd = path.join(root, 'cwd');
  const home = path.join(root, 'home');
  fs.mkdirSync(cwd);
  fs.mkdirSync(home);
  return { root, cwd, home, systemFile: path.join(root, 'etc', 'aviso_server', 'config.yaml') };
}

export function removeSandboxes(): void {
  for (const dir of created.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

export function writeFile(file: string, content: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
  return file;
}

export function loadIn(box: Sandbox, env: Record<string, string | undefined> = {}): AppConfig {
  return loadConfig({ env, cwd: box.cwd, home: box.home, systemFile: box.systemFile });
}

export const MINIMAL_YAML = `application:
  host: "127.0.0.1"
  port: 8000
notification_backend:
  kind: in_memory
`;

/** Loads one YAML text through AVISOSERVER_CONFIG_FILE. */
export function loadYaml(yaml: string, env: Record<string, string | undefined> = {}): AppConfig {
  const box = sandbox();
  const file = writeFile(path.join(box.root, 'config.yaml'), yaml);
  return loadIn(box, { ...env, AVISOSERVER_CONFIG_FILE: file });
}

export type Doc = { [key: string]: unknown };

const MINIMAL_DOC: Doc = {
  application: { host: '127.0.0.1', port: 8000 },
  notification_backend: { kind: 'in_memory' },
};

function isDoc(value: unknown): value is Doc {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Recursive merge into a deep copy of `base`; `undefined` in the patch deletes the key. */
export function merged(base: Doc, patch: Doc): Doc {
  const result: Doc = structuredClone(base);
  for (const [key, value] of Object.entries(patch)) {
    const before = result[key];
    if (value === undefined) delete result[key];
    else result[key] = isDoc(before) && isDoc(value) ? merged(before, value) : value;
  }
  return result;
}

/** Loads the minimal configuration with `patch` merged in, written as a JSON file. */
export function loadDoc(patch: Doc = {}, env: Record<string, string | undefined> = {}): AppConfig {
  const box = sandbox();
  const file = writeFile(path.join(box.root, 'config.json'), JSON.stringify(merged(MINIMAL_DOC, patch)));
  return loadIn(box, { ...env, AVISOSERVER_CONFIG_FILE: file });
}

/** A valid schema entry to build test schemas from. */
export function schema(base: string, patch: Doc = {}): Doc {
  return merged(
    {
      topic: { base, key_order: ['class', 'date'] },
      identifier: {
        class: { type: 'StringHandler', max_length: 2, required: true },
        date: { type: 'DateHandler', canonical_format: '%Y%m%d', required: false },
      },
    },
    patch,
  );
}
