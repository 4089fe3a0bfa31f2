#!/usr/bin/env node
// The reference check of `npm run lint` (docs/design/README.md "References"): every document,
// heading and decision that code, tests, benches and docs cite must exist in this repository.
// Plain ESM so lint runs it without a build.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SCANNED = [
  'src',
  'packages/client/src',
  'packages/client/test',
  'packages/client/bin',
  'packages/client/README.md',
  'console',
  'static',
  'test',
  'bench',
  'scripts',
  'docs',
  'README.md',
];
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'fixtures', 'images', 'profiles']);
const EXTENSIONS = /\.(ts|mts|mjs|js|md|html|css|sh|yaml|yml)$/;
/** The check's own test cites dangling references on purpose. */
const SKIPPED_FILES = new Set(['test/unit/scripts/check-doc-references.test.ts']);
const DECISIONS = 'docs/design/decisions.md';
const SPEC_FOLDER = ['..', 'shared'].join('/');
/** A line that names another repository, a URL or an RFC cites that work's files and sections, not ours. */
const EXTERNAL = /(https?:\/\/|\b(ecmwf|nats-io|fastify|nchan|slact)\/[A-Za-z0-9_.-]+|\bRFC ?[0-9]{3,5}\b)/;

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
export function slugOf(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors a markdown text offers: heading slugs (with GitHub's -1, -2 for repeats) and `<a id>`s. */
export function anchorsOf(markdown) {
  const anchors = new Set();
  const seen = new Map();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const slug = slugOf(heading[1].replace(/`/g, ''));
      const count = seen.get(slug) ?? 0;
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
      seen.set(slug, count + 1);
    }
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]);
  }
  return anchors;
}

/** The numbers of a markdown text's numbered headings (`## 9.4 Effective cap`, `## 1. Scope`): what a section sign may cite. */
export function sectionNumbersOf(markdown) {
  const numbers = new Set();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const numbered = fenced ? null : /^#{1,6}\s+([0-9]+(?:\.[0-9]+)*)\.?\s/.exec(line);
    if (numbered) numbers.add(numbered[1]);
  }
  return numbers;
}

/** Where a cited `.md` path points: a path with a folder from the citing file or the root; a bare name from docs/. */
function targetOf(reference, citingFile, exists) {
  const candidates = reference.includes('/')
    ? [join(dirname(citingFile), reference), reference]
    : [join(dirname(citingFile), reference), join('docs', reference), join('docs/design', reference), reference];
  return candidates.map((candidate) => relative('.', join('.', candidate))).find((candidate) => exists(candidate));
}

/**
 * The dangling references of one file's text: `[{ line, reference }]`. `readDoc(path)` gives a
 * document's text or undefined.
 */
export function danglingReferences(citingFile, text, readDoc) {
  const exists = (path) => readDoc(path) !== undefined;
  const problems = [];
  const lines = text.split('\n');
  const ownSections = citingFile.endsWith('.md') ? sectionNumbersOf(text) : new Set();
  lines.forEach((line, index) => {
    const report = (reference) => problems.push({ line: index + 1, reference });
    // The specification's folder beside a checkout: a person who clones the project does not have it.
    if (line.includes(SPEC_FOLDER)) report(SPEC_FOLDER);
    if (EXTERNAL.test(line)) return;
    const cited = [];
    for (const match of line.matchAll(
      /((?:\.{1,2}\/)*[A-Za-z0-9_][A-Za-z0-9_./-]*\.md)(#[A-Za-z0-9_-]+)?(\s*(?:["“][^"”]+["”]))?(\s*§\s*[0-9][0-9.]*[0-9]?)?/g,
    )) {
      const [, path, anchor, quotedHeading, section] = match;
      cited.push(match.index);
      const target = targetOf(path, citingFile, exists);
      if (target === undefined) {
        report(path + (section ? section.replace(/\s+/g, ' ') : ''));
        continue;
      }
      const anchors = anchorsOf(readDoc(target) ?? '');
      if (anchor && !anchors.has(anchor.slice(1))) report(`${path}${anchor}`);
      if (quotedHeading && !anchors.has(slugOf(quotedHeading.trim().slice(1, -1).replace(/`/g, '')))) report(`${path}${quotedHeading}`);
      const number = section?.replace(/[\s§]/g, '').replace(/\.$/, '');
      if (number && !sectionNumbersOf(readDoc(target) ?? '').has(number)) report(`${path}${section.replace(/\s+/g, ' ')}`);
    }
    // A section sign with no document before it on the line cites the citing document's own
    // numbered section, when it has numbered headings; otherwise it points nowhere.
    for (const match of line.matchAll(/§\s*([0-9][0-9.]*[0-9]|[0-9])/g)) {
      if (cited.some((start) => start < match.index)) continue;
      if (!ownSections.has(match[1])) report(match[0].replace(/\s+/g, ''));
    }
    for (const match of line.matchAll(/(?<![A-Za-z0-9_#-])D([0-9]{1,2})(?![0-9A-Za-z_])/g)) {
      const decisions = anchorsOf(readDoc(DECISIONS) ?? '');
      if (!decisions.has(`d${match[1]}`)) report(match[0]);
    }
  });
  return problems;
}

function filesUnder(path) {
  const absolute = join(ROOT, path);
  if (!existsSync(absolute)) return [];
  if (statSync(absolute).isFile()) return [path];
  return readdirSync(absolute, { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory()) return SKIPPED_DIRS.has(entry.name) ? [] : filesUnder(join(path, entry.name));
    return EXTENSIONS.test(entry.name) ? [join(path, entry.name)] : [];
  });
}

function main() {
  const cache = new Map();
  const readDoc = (path) => {
    if (!cache.has(path)) {
      const absolute = join(ROOT, path);
      cache.set(path, existsSync(absolute) && statSync(absolute).isFile() ? readFileSync(absolute, 'utf8') : undefined);
    }
    return cache.get(path);
  };
  const problems = [];
  for (const file of SCANNED.flatMap(filesUnder)) {
    if (SKIPPED_FILES.has(file)) continue;
    for (const problem of danglingReferences(file, readDoc(file) ?? '', readDoc))
      problems.push(`${file}:${problem.line}: ${problem.reference}`);
  }
  for (const line of problems) process.stderr.write(`${line}: no such document, heading or decision in this repository\n`);
  if (problems.length > 0) process.exit(1);
  process.stdout.write('doc references: ok\n');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
