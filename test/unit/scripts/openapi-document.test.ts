import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OPENAPI_DOCUMENT_PATH, renderOpenApiDocument } from '../../../scripts/openapi-document.js';

describe('schemas/openapi.json', () => {
  it('matches the document the routes generate (run `npm run docs:generate` after changing a route)', async () => {
    expect(readFileSync(OPENAPI_DOCUMENT_PATH, 'utf8')).toBe(await renderOpenApiDocument());
  });
});
