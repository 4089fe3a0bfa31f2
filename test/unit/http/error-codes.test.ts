import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { slugOf } from '../../../scripts/check-doc-references.mjs';
import { ApiError, apiError } from '../../../src/http/routes/api-error.js';
import { ENDPOINT_LABEL, ERROR_CODES, type ErrorCodeEntry } from '../../../src/http/routes/error-codes.js';

/**
 * The table of error codes (D50) and docs/api.md hold each other: every code of the table is a
 * row of docs/api.md#error-codes with the same status, `error` and section, and that section
 * names it; every code docs/api.md names anywhere is in the table.
 */

const API_DOC = 'docs/api.md';
const readDoc = (page: string): string => readFileSync(page, 'utf8');

interface DocRow {
  readonly status: string;
  readonly error: string;
  /** The link of "Described in", as a `docs/<page>#<anchor>` path. */
  readonly doc: string;
}

/** The text under the heading whose anchor is `anchor`, down to the next heading of its level or above. */
function sectionOf(markdown: string, anchor: string): string | undefined {
  let level = 0;
  let fenced = false;
  const lines: string[] = [];
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^(#{1,6})\s+(.*?)\s*$/.exec(line);
    if (heading) {
      const depth = heading[1]?.length ?? 0;
      if (level > 0 && depth <= level) break;
      if (level === 0 && slugOf((heading[2] ?? '').replace(/`/g, '')) === anchor) level = depth;
    }
    if (level > 0) lines.push(line);
  }
  return level > 0 ? lines.join('\n') : undefined;
}

/** The rows of docs/api.md's "Error codes" table, by code. */
function documentedRows(markdown: string): Map<string, DocRow> {
  const rows = new Map<string, DocRow>();
  for (const line of (sectionOf(markdown, 'error-codes') ?? '').split('\n')) {
    const cells = /^\| `([A-Z_]+)` \| `(\d{3})` \| (.*?) \| \[[^\]]*\]\(([^)]+)\)/.exec(line);
    if (!cells) continue;
    const [, code = '', status = '', error = '', link = ''] = cells;
    rows.set(code, { status, error, doc: link.startsWith('#') ? `${API_DOC}${link}` : `docs/${link}` });
  }
  return rows;
}

/** Every code a page names: in an error body (`"code":"…"`), or in code text, alone or after its status. */
function codesNamedIn(markdown: string): Set<string> {
  const codes = new Set<string>();
  for (const match of markdown.matchAll(/"code":"([A-Z][A-Z0-9_]*)"/g)) codes.add(match[1] ?? '');
  for (const match of markdown.matchAll(/`(?:\d{3} )?([A-Z][A-Z0-9]*_[A-Z0-9_]*)`/g)) codes.add(match[1] ?? '');
  for (const code of documentedRows(markdown).keys()) codes.add(code);
  return codes;
}

/** What is wrong between a table and the docs; empty when they agree. */
function mismatches(table: Readonly<Record<string, ErrorCodeEntry>>, apiDoc: string, read: (page: string) => string): string[] {
  const problems: string[] = [];
  const rows = documentedRows(apiDoc);
  for (const [code, entry] of Object.entries(table)) {
    const row = rows.get(code);
    if (!row) {
      problems.push(`${code}: no row in ${API_DOC}#error-codes`);
      continue;
    }
    const error = entry.error === ENDPOINT_LABEL ? "the endpoint's label" : `\`${entry.error}\``;
    if (row.status !== String(entry.status)) problems.push(`${code}: status ${row.status} documented, ${entry.status} in the table`);
    if (!row.error.startsWith(error)) problems.push(`${code}: error ${row.error} documented, ${error} in the table`);
    if (row.doc !== entry.doc) problems.push(`${code}: described in ${row.doc} documented, ${entry.doc} in the table`);
    const [page = '', anchor = ''] = entry.doc.split('#');
    const section = sectionOf(page === API_DOC ? apiDoc : read(page), anchor);
    if (section === undefined) problems.push(`${code}: ${entry.doc} is no heading`);
    else if (!section.includes(code)) problems.push(`${code}: ${entry.doc} does not name it`);
  }
  for (const code of codesNamedIn(apiDoc)) {
    if (!Object.hasOwn(table, code)) problems.push(`${code}: named in ${API_DOC}, not in the table`);
  }
  return problems;
}

describe('the table of error codes and docs/api.md', () => {
  it('agree: every code documented with its status, error and section, every documented code in the table', () => {
    expect(mismatches(ERROR_CODES, readDoc(API_DOC), readDoc)).toEqual([]);
    // The check reads what it should: every row of the table, and the codes of the other sections.
    expect([...documentedRows(readDoc(API_DOC)).keys()].sort()).toEqual(Object.keys(ERROR_CODES).sort());
    expect(codesNamedIn(readDoc(API_DOC))).toContain('TOO_MANY_STREAMS');
  });

  it('fail for a code added without documentation', () => {
    const added = {
      ...ERROR_CODES,
      RATE_LIMITED: { status: 429, error: 'rate_limited', message: 'Slow down', doc: 'docs/api.md#error-codes' },
    };
    expect(mismatches(added, readDoc(API_DOC), readDoc)).toEqual(['RATE_LIMITED: no row in docs/api.md#error-codes']);
  });

  it('fail for a documented code the table lacks, and for a row that says another status or section', () => {
    const doc = `${readDoc(API_DOC)}\nA \`429 RATE_LIMITED\` answer.\n`;
    expect(mismatches(ERROR_CODES, doc, readDoc)).toEqual(['RATE_LIMITED: named in docs/api.md, not in the table']);
    const wrong = readDoc(API_DOC)
      .replace('| `BATCH_EMPTY` | `400` |', '| `BATCH_EMPTY` | `413` |')
      .replace(
        '| `INVALID_QUERY` | `400` | `invalid_query` | [the admin streams list](#get-apiv1adminstreams) |',
        '| `INVALID_QUERY` | `400` | `invalid_query` | [reload](#post-apiv1adminreload) |',
      );
    expect(mismatches(ERROR_CODES, wrong, readDoc)).toEqual([
      'BATCH_EMPTY: status 413 documented, 400 in the table',
      'INVALID_QUERY: described in docs/api.md#post-apiv1adminreload documented, docs/api.md#get-apiv1adminstreams in the table',
    ]);
  });
});

describe('apiError', () => {
  it('takes status, error and message from the code entry', () => {
    const error = apiError('BATCH_TOO_MANY_ITEMS', [1001, 1000]);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.statusCode).toBe(413);
    expect(error.body).toEqual({
      code: 'BATCH_TOO_MANY_ITEMS',
      error: 'batch_too_many_items',
      message: 'The batch holds 1001 notifications, more than notification_endpoint.max_batch_items (1000)',
    });
  });

  it("gives the request-shape codes the endpoint's label", () => {
    expect(apiError('UNKNOWN_FIELD', ['Request contains unknown fields'], { endpoint: 'replay' }).body.error).toBe(
      'Invalid Replay Request',
    );
  });
});
