import { describe, expect, it } from 'vitest';
import { allowedOf, circlesOf, importsOf, layerOfFile, layersOf } from '../../../scripts/check-layers.mjs';

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
  it('finds circles, and none in a tree', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(circlesOf(graph)).toEqual([['a', 'b', 'c']]);
    expect(circlesOf(new Map([['a', ['b']], ['b', []]]))).toEqual([]);
  });
});
