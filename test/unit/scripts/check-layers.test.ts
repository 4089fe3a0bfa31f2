import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allowedOf, circlesOf, clientBoundaryProblem, importsOf, layerOfFile, layersOf } from '../../../scripts/check-layers.mjs';

const CHECKER = resolve(import.meta.dirname, '../../../scripts/check-layers.mjs');

// The layer check of `npm run lint` (docs/design/architecture.md "Layers").
const ARCHITECTURE = [
  '# Architecture',
  '',
  '## Layers',
  '',
  '| rank | layer | holds |',
  '|---|---|---|',
  '| 1 | foundation | `src/json/`, `src/clock.ts` |',
  '| 2 | backend | `src/backend/`, `src/backend/memory/special.ts` |',
  '',
  '### Allowed upward imports',
  '',
  '| importer | imported | reason |',
  '|---|---|---|',
  '| `src/json/a.ts` | `src/backend/b.ts` | a reason |',
  '',
  '## Next',
  '',
  '| 9 | not a layer | `src/elsewhere/` |',
].join('\n');

describe('the layers and allowances read from architecture.md', () => {
  it('reads the rows of the Layers table only', () => {
    expect(layersOf(ARCHITECTURE).map((layer) => [layer.rank, layer.name, layer.paths])).toEqual([
      [1, 'foundation', ['src/json/', 'src/clock.ts']],
      [2, 'backend', ['src/backend/', 'src/backend/memory/special.ts']],
    ]);
    expect(allowedOf(ARCHITECTURE)).toEqual(['src/json/a.ts -> src/backend/b.ts']);
  });
  it('places a file by the longest matching path, a file path only by equality', () => {
    const layers = layersOf(ARCHITECTURE);
    expect(layerOfFile('src/json/x.ts', layers)?.name).toBe('foundation');
    expect(layerOfFile('src/clock.ts', layers)?.name).toBe('foundation');
    expect(layerOfFile('src/clock.tsx', layers)).toBeUndefined();
    expect(layerOfFile('src/backend/memory/special.ts', layers)?.rank).toBe(2);
  });
});

describe('imports', () => {
  it('tells type-only imports from value imports, including dynamic ones', () => {
    const text = [
      "import type { A } from './a.js';",
      "import { type B, type C } from './b.js';",
      "import { type D, e } from './d.js';",
      "export { f } from '../f.js';",
      "import fs from 'node:fs';",
      "const g = await import('./g.js');",
    ].join('\n');
    expect(importsOf(text)).toEqual([
      { specifier: './a.js', typeOnly: true },
      { specifier: './b.js', typeOnly: true },
      { specifier: './d.js', typeOnly: false },
      { specifier: '../f.js', typeOnly: false },
      { specifier: './g.js', typeOnly: false },
    ]);
  });
  it('reads paths in double quotes as in single quotes', () => {
    const text = [
      'import type { A } from "./a.js";',
      'import { b } from "../b.js";',
      'export * from "./c.js";',
      'import "./d.js";',
      'const e = await import("./e.js");',
      `import { f } from "./it's.js";`,
      `import { g } from './say-"hi".js';`,
    ].join('\n');
    expect(importsOf(text)).toEqual([
      { specifier: './a.js', typeOnly: true },
      { specifier: '../b.js', typeOnly: false },
      { specifier: './c.js', typeOnly: false },
      { specifier: "./it's.js", typeOnly: false },
      { specifier: './say-"hi".js', typeOnly: false },
      { specifier: './d.js', typeOnly: false },
      { specifier: './e.js', typeOnly: false },
    ]);
  });
  it('finds circles, and none in a tree', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(circlesOf(graph)).toEqual([['a', 'b', 'c']]);
    expect(
      circlesOf(
        new Map([
          ['a', ['b']],
          ['b', []],
        ]),
      ),
    ).toEqual([]);
  });
});

describe('the client package boundary', () => {
  it('lets the command import the public entry and its own modules, nothing else of the library', () => {
    expect(clientBoundaryProblem('packages/client/src/cli/main.ts', 'packages/client/src/index.ts')).toBeUndefined();
    expect(clientBoundaryProblem('packages/client/src/cli/main.ts', 'packages/client/src/cli/log.ts')).toBeUndefined();
    expect(clientBoundaryProblem('packages/client/src/client.ts', 'packages/client/src/url.ts')).toBeUndefined();
    expect(clientBoundaryProblem('packages/client/src/cli/triggers/run.ts', 'packages/client/src/stream/backoff.ts')).toMatch(
      /only through its public entry/,
    );
    expect(clientBoundaryProblem('packages/client/src/cli/main.ts', 'packages/client/src/internal.ts')).toMatch(
      /only through its public entry/,
    );
    expect(clientBoundaryProblem('packages/client/src/client.ts', 'packages/client/src/cli/log.ts')).toMatch(
      /does not import the aviso command/,
    );
  });

  /** A tree with one layer, the client's public entry, an internal module and one command file. */
  function tree(commandFile: string): string {
    const root = mkdtempSync(join(tmpdir(), 'check-layers-'));
    const files: Record<string, string> = {
      'docs/design/architecture.md': '## Layers\n\n| rank | layer | holds |\n|---|---|---|\n| 1 | all | `src/` |\n',
      'src/main.ts': 'export const x = 1;\n',
      'packages/client/src/index.ts': "export { backoffDelay } from './stream/backoff.js';\n",
      'packages/client/src/internal.ts': "export * from './index.js';\n",
      'packages/client/src/stream/backoff.ts': 'export const backoffDelay = 1;\n',
      'packages/client/src/cli/main.ts': commandFile,
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    return root;
  }

  function check(commandFile: string): { status: number | null; stderr: string } {
    const root = tree(commandFile);
    try {
      const run = spawnSync(process.execPath, [CHECKER, '--root', root], { encoding: 'utf8' });
      return { status: run.status, stderr: run.stderr };
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }

  it('passes a command that imports the public entry', () => {
    expect(check("import { backoffDelay } from '../index.js';\n")).toEqual({ status: 0, stderr: '' });
  });

  it('fails a command that imports an internal module, in either quote style', () => {
    for (const specifier of ["'../stream/backoff.js'", '"../stream/backoff.js"', '"../internal.js"']) {
      const result = check(`import { backoffDelay } from ${specifier};\n`);
      expect(result.status).toBe(1);
      expect(result.stderr).toMatch(
        /^packages\/client\/src\/cli\/main\.ts -> packages\/client\/src\/(stream\/backoff|internal)\.ts: the aviso command uses the client library only through its public entry packages\/client\/src\/index\.ts\n$/,
      );
    }
  });
});
