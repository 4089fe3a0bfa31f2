import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// Every name of the public entry is a promise to the package's users, so it is exactly the list
// docs/client.md "Public API" documents: a name exported without documentation, or documented
// without being exported, fails here.
const PACKAGE = resolve(import.meta.dirname, '../..');
const DOC = resolve(import.meta.dirname, '../../../../docs/client.md');

/** The backticked names of the bullet lines of docs/client.md's "Public API" section. */
function documentedNames(markdown: string): string[] {
  const section = markdown.split(/^## /m).find((part) => part.startsWith('Public API\n'));
  if (section === undefined) throw new Error('docs/client.md has no "Public API" section');
  const bullets = section.split(/\n(?=- )/).filter((block) => block.startsWith('- '));
  return bullets.flatMap((block) => [...block.matchAll(/`([^`]+)`/g)].map((match) => match[1]!));
}

/** Every name `index.ts` exports, values and types, as the compiler sees them. */
function exportedNames(entry: string): string[] {
  const program = ts.createProgram([entry], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    noEmit: true,
    // Only the names are read, not their types: no standard library or @types to load.
    noLib: true,
    types: [],
  });
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(program.getSourceFile(entry)!);
  if (module === undefined) throw new Error(`${entry} is not a module`);
  return checker.getExportsOfModule(module).map((symbol) => symbol.name);
}

describe('the public entry of @aviso-ts/client', () => {
  it('exports exactly the names docs/client.md lists under "Public API"', () => {
    const documented = documentedNames(readFileSync(DOC, 'utf8'));
    expect(documented.every((name) => /^[A-Za-z]\w*$/.test(name))).toBe(true);
    expect(new Set(documented).size).toBe(documented.length);
    expect(exportedNames(join(PACKAGE, 'src/index.ts')).sort()).toEqual([...documented].sort());
  });

  it('is the only entry package.json exports', () => {
    const manifest = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
    expect(manifest.exports).toEqual({ '.': { types: './dist/index.d.ts', default: './dist/index.js' } });
  });
});
