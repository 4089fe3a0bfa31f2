import { describe, expect, it } from 'vitest';
import { anchorsOf, danglingReferences, sectionNumbersOf, slugOf } from '../../../scripts/check-doc-references.mjs';

// The reference check of `npm run lint` (docs/design/README.md "References").
const DOCS: Record<string, string> = {
  'docs/streaming.md': '# Streaming\n\n## Slow consumers\n\ntext\n\n## Slow consumers\n',
  'docs/design/decisions.md': '# Decisions\n\n<a id="d9"></a>\n## D9: bounded\n',
  'docs/design/rules/streaming.md': '# Streaming\n\n## 9. Replay algorithm\n\n### 9.4 Effective cap `Q`\n\n```\n## 9.7 in a fence\n```\n',
};
const readDoc = (path: string): string | undefined => DOCS[path];
const check = (text: string, file = 'src/streaming/x.ts'): string[] =>
  danglingReferences(file, text, readDoc).map((problem) => problem.reference);

describe('slugs and anchors', () => {
  it('slugs headings as GitHub does and numbers repeats', () => {
    expect(slugOf('Several worker processes: `application.workers`'.replace(/`/g, ''))).toBe('several-worker-processes-applicationworkers');
    expect([...anchorsOf(DOCS['docs/streaming.md'] ?? '')]).toEqual(['streaming', 'slow-consumers', 'slow-consumers-1']);
    expect(anchorsOf(DOCS['docs/design/decisions.md'] ?? '').has('d9')).toBe(true);
  });
  it('numbers a document by its numbered headings, outside code fences', () => {
    expect([...sectionNumbersOf(DOCS['docs/design/rules/streaming.md'] ?? '')]).toEqual(['9', '9.4']);
  });
});

describe('references that resolve', () => {
  it('accepts an existing document, anchor, quoted heading and decision', () => {
    expect(check('// see docs/streaming.md#slow-consumers and docs/streaming.md "Slow consumers" (D9)')).toEqual([]);
    expect(check('// bare names are looked up in docs/: streaming.md')).toEqual([]);
  });
  it('accepts a section sign naming a numbered heading of the cited document', () => {
    expect(check('// docs/design/rules/streaming.md §9.4 and docs/design/rules/streaming.md §9.')).toEqual([]);
  });
  it('reads a bare section sign in a numbered document as its own section', () => {
    const own = '# Rules\n\n## 1. Scope\n\nSee §1 and §2.\n';
    expect(danglingReferences('docs/design/rules/x.md', own, readDoc).map((problem) => problem.reference)).toEqual(['§2']);
  });
  it('skips lines that cite another repository or an RFC', () => {
    expect(check('// ecmwf/aviso-client docs/src/internals/decisions.md §3')).toEqual([]);
    expect(check('// HTTP/2 forbids them (RFC 9113 §8.2.2)')).toEqual([]);
  });
});

describe('references that point nowhere', () => {
  it('reports a missing document, anchor, heading, section sign and decision', () => {
    expect(check('// schema-and-validation.md §8.2')).toEqual(['schema-and-validation.md §8.2']);
    expect(check('// docs/streaming.md#fast-consumers')).toEqual(['docs/streaming.md#fast-consumers']);
    expect(check('// docs/streaming.md "Fast consumers"')).toEqual(['docs/streaming.md "Fast consumers"']);
    expect(check('// streaming.md §4.2')).toEqual(['streaming.md §4.2']);
    expect(check('// docs/design/rules/streaming.md §9.7')).toEqual(['docs/design/rules/streaming.md §9.7']);
    expect(check('// as §7.3 says')).toEqual(['§7.3']);
    expect(check('// D77 says so')).toEqual(['D77']);
  });
  it('reports the specification folder outside the repository', () => {
    expect(check(`// ${['..', 'shared'].join('/')}/spec/api.md`)).toContain(['..', 'shared'].join('/'));
  });
  it('gives the line of each reference', () => {
    expect(danglingReferences('a.ts', 'ok\n// D77\n', readDoc)).toEqual([{ line: 2, reference: 'D77' }]);
  });
});
