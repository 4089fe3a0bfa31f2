#!/usr/bin/env node
// The layer check of `npm run lint` (docs/design/architecture.md "Layers"): no import of `src/`
// runs from a lower layer up to a higher one, except the type-only imports that architecture.md
// lists with their reason, and no module of `src/` or of the client imports itself in a circle.
// The layers and the allowed imports are read from that document, so it cannot drift from the check.
// In the client package, the `aviso` command (`src/cli/`) uses the library only through its public
// entry (`src/index.ts`, what docs/client.md documents), and the library never imports the command.
// Plain ESM so lint runs it without a build. `--root DIR` checks another tree (the checker's test).
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const rootFlag = process.argv.indexOf('--root');
const ROOT = rootFlag > 0 ? resolve(process.argv[rootFlag + 1]) : resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ARCHITECTURE = 'docs/design/architecture.md';
const CIRCLE_ROOTS = ['src', 'packages/client/src'];
const CLIENT_SRC = 'packages/client/src/';
const CLI_SRC = 'packages/client/src/cli/';
const CLIENT_PUBLIC_ENTRY = 'packages/client/src/index.ts';

/**
 * The layers of architecture.md's table `| rank | layer | holds |`: each row's rank and the
 * backticked paths in its "holds" cell (a folder ends with `/`).
 */
export function layersOf(markdown) {
  const layers = [];
  for (const line of sectionOf(markdown, 'Layers')) {
    const row = /^\|\s*([0-9]+)\s*\|\s*([^|]+?)\s*\|([^|]+)\|/.exec(line);
    if (!row) continue;
    const paths = [...row[3].matchAll(/`([^`]+)`/g)].map((match) => match[1]);
    layers.push({ rank: Number(row[1]), name: row[2], paths });
  }
  return layers;
}

/** The allowed upward type-only imports of the table `| importer | imported | reason |` under "Allowed upward imports". */
export function allowedOf(markdown) {
  const allowed = [];
  for (const line of sectionOf(markdown, 'Allowed upward imports')) {
    const row = /^\|\s*`([^`]+)`\s*\|\s*`([^`]+)`\s*\|/.exec(line);
    if (row) allowed.push(`${row[1]} -> ${row[2]}`);
  }
  return allowed;
}

function sectionOf(markdown, heading) {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => new RegExp(`^#{2,3}\\s+${heading}\\s*$`).test(line));
  if (start < 0) return [];
  const level = /^#+/.exec(lines[start])[0].length;
  const end = lines.findIndex((line, index) => index > start && new RegExp(`^#{1,${level}}\\s`).test(line));
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

/** The layer of a file under `src/`: the row whose path is the longest prefix of it. */
export function layerOfFile(file, layers) {
  let best;
  for (const layer of layers) {
    for (const path of layer.paths) {
      const matches = path.endsWith('/') ? file.startsWith(path) : file === path;
      if (matches && (!best || path.length > best.path.length)) best = { layer, path };
    }
  }
  return best?.layer;
}

/**
 * The relative imports of one TypeScript text: `[{ specifier, typeOnly }]`. A path may be quoted
 * either way (`'./a.js'` or `"./a.js"`): an import the check did not see would pass unchecked.
 */
export function importsOf(text) {
  const found = [];
  // Either quote, the same one at both ends; `path` names the specifier.
  const path = `(?<quote>['"])(?<path>\\.{1,2}\\/(?:(?!\\k<quote>).)+)\\k<quote>`;
  const statements = new RegExp(`(?:^|\\n)\\s*(import|export)\\s+(type\\s+)?([^;]*?)\\s+from\\s+${path}`, 'g');
  for (const match of text.matchAll(statements)) {
    // `import { type A, type B }` is as type-only as `import type { A, B }`.
    const names = /^\{([^}]*)\}$/.exec(match[3].trim());
    const allTyped =
      names !== null &&
      names[1]
        .split(',')
        .filter((name) => name.trim() !== '')
        .every((name) => /^\s*type\s/.test(name));
    found.push({ specifier: match.groups.path, typeOnly: match[2] !== undefined || allTyped });
  }
  for (const match of text.matchAll(new RegExp(`(?:^|\\n)\\s*import\\s+${path}`, 'g')))
    found.push({ specifier: match.groups.path, typeOnly: false });
  for (const match of text.matchAll(new RegExp(`import\\(\\s*${path}\\s*\\)`, 'g')))
    found.push({ specifier: match.groups.path, typeOnly: false });
  return found;
}

/**
 * What is wrong with one import inside the client package, if anything: the command importing a
 * library module other than the public entry (then it would depend on something no user of the
 * package is promised, and the public entry would stop saying what the command needs), or the
 * library importing the command.
 */
export function clientBoundaryProblem(file, target) {
  if (!file.startsWith(CLIENT_SRC) || !target.startsWith(CLIENT_SRC)) return undefined;
  const fromCli = file.startsWith(CLI_SRC);
  const toCli = target.startsWith(CLI_SRC);
  if (fromCli && !toCli && target !== CLIENT_PUBLIC_ENTRY) {
    return `${file} -> ${target}: the aviso command uses the client library only through its public entry ${CLIENT_PUBLIC_ENTRY}`;
  }
  if (!fromCli && toCli) return `${file} -> ${target}: the client library does not import the aviso command`;
  return undefined;
}

function sourceFiles(path) {
  const absolute = join(ROOT, path);
  if (!existsSync(absolute)) return [];
  return readdirSync(absolute, { withFileTypes: true }).flatMap((entry) => {
    const child = join(path, entry.name);
    if (entry.isDirectory()) return sourceFiles(child);
    return /\.ts$/.test(entry.name) && !/\.d\.ts$/.test(entry.name) ? [child] : [];
  });
}

/** The file an import names: `./x.js` is the TypeScript source `./x.ts`. */
function resolveImport(file, specifier) {
  const target = relative('.', join(dirname(file), specifier));
  const candidates = [target.replace(/\.js$/, '.ts'), target, `${target}.ts`, join(target, 'index.ts')];
  return candidates.find((candidate) => existsSync(join(ROOT, candidate)) && statSync(join(ROOT, candidate)).isFile());
}

/** Strongly connected groups of more than one file (Tarjan): the import circles. */
export function circlesOf(graph) {
  let counter = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const circles = [];
  const visit = (node) => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node), low.get(next)));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node), index.get(next)));
    }
    if (low.get(node) === index.get(node)) {
      const group = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        group.push(member);
      } while (member !== node);
      if (group.length > 1 || (graph.get(node) ?? []).includes(node)) circles.push(group.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return circles;
}

function main() {
  const architecture = readFileSync(join(ROOT, ARCHITECTURE), 'utf8');
  const layers = layersOf(architecture);
  const allowed = new Set(allowedOf(architecture));
  const problems = [];
  const usedAllowances = new Set();
  const graph = new Map();
  for (const root of CIRCLE_ROOTS) {
    for (const file of sourceFiles(root)) {
      const targets = [];
      for (const { specifier, typeOnly } of importsOf(readFileSync(join(ROOT, file), 'utf8'))) {
        const target = resolveImport(file, specifier);
        if (!target) continue;
        targets.push(target);
        const boundary = clientBoundaryProblem(file, target);
        if (boundary) problems.push(boundary);
        if (root !== 'src' || !target.startsWith('src/')) continue;
        const from = layerOfFile(file, layers);
        const to = layerOfFile(target, layers);
        if (!from) problems.push(`${file}: in no layer of ${ARCHITECTURE} "Layers"`);
        if (!from || !to || to.rank <= from.rank) continue;
        const key = `${file} -> ${target}`;
        if (typeOnly && allowed.has(key)) usedAllowances.add(key);
        else
          problems.push(
            `${key}: ${from.name} (layer ${from.rank}) imports ${to.name} (layer ${to.rank})${typeOnly ? '; a type-only import, not listed in "Allowed upward imports"' : ''}`,
          );
      }
      graph.set(file, targets);
    }
  }
  for (const key of allowed)
    if (!usedAllowances.has(key))
      problems.push(`${key}: listed in "Allowed upward imports" but no such type-only upward import exists; remove the row`);
  for (const circle of circlesOf(graph)) problems.push(`import circle: ${circle.join(' -> ')}`);
  for (const problem of problems) process.stderr.write(`${problem}\n`);
  if (problems.length > 0) process.exit(1);
  process.stdout.write(
    `layers: ok (${layers.length} layers, ${allowed.size} allowed type-only upward imports, no import circle, the aviso command through the client's public entry)\n`,
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
