import fs from 'node:fs';
import path from 'node:path';
import { OPENAPI_DOCUMENT_PATH, renderOpenApiDocument } from './openapi-document.js';

/**
 * Writes schemas/openapi.json from the routes' schemas. Run from the repository root after a
 * build (`npm run docs:generate`); test/unit/scripts/openapi-document.test.ts fails while the
 * committed file differs from a fresh rendering.
 */
const root = path.resolve(process.argv[2] ?? process.cwd());
const file = path.join(root, OPENAPI_DOCUMENT_PATH);
fs.mkdirSync(path.dirname(file), { recursive: true });
fs.writeFileSync(file, await renderOpenApiDocument());
console.log(`wrote ${OPENAPI_DOCUMENT_PATH}`);
