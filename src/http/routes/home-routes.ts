import { existsSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { HOMEPAGE_KEYS } from '../../config/homepage-links.js';
import type { HomepageConfig } from '../../config/model.js';
import type { SchemaRegistry } from '../../schema/schema-registry.js';
import { SERVER_VERSION } from '../../version.js';
import { ROUTE_DOCS } from './route-docs.js';

const INDEX_NOT_FOUND = '<h1>Index file not found</h1><p>Please check the static files configuration.</p>';

/**
 * `GET /` and `/static/*` (docs/design/rules/operations.md §4.3): `index.html` from `application.static_files_path`,
 * read on every request with `{{SERVER_VERSION}}`, `{{EVENT_TYPES}}` and the four
 * `application.homepage` links (`{{CLIENT_DOCUMENTATION_URL}}` …, D29) filled in, and the directory
 * itself with listings.
 */
export async function registerHomeRoutes(
  app: FastifyInstance,
  options: { staticFilesPath: string; registry: SchemaRegistry; logger: Logger; homepage: HomepageConfig },
): Promise<void> {
  const root = resolve(options.staticFilesPath);
  const fills = new Map<string, string>([
    ['SERVER_VERSION', SERVER_VERSION],
    // Validated at startup as http(s) URLs, and still escaped: the page is HTML whatever they hold.
    ...HOMEPAGE_KEYS.map((key): [string, string] => [key.toUpperCase(), escapeHtml(options.homepage[key])]),
    ['EVENT_TYPES', eventTypeList(options.registry)],
  ]);
  // A configuration reload may change the event types.
  options.registry.onReplace(() => fills.set('EVENT_TYPES', eventTypeList(options.registry)));

  app.get('/', { schema: ROUTE_DOCS.home }, async (_request, reply) => {
    let html: string;
    try {
      const template = await readFile(join(root, 'index.html'), 'utf8');
      // One pass, so a filled-in value that happens to contain `{{…}}` is never filled in again.
      html = template.replace(/\{\{([A-Z_]+)\}\}/g, (placeholder, name: string) => fills.get(name) ?? placeholder);
    } catch {
      html = INDEX_NOT_FOUND;
    }
    return reply.type('text/html; charset=utf-8').send(html);
  });

  if (!existsSync(root) || !statSync(root).isDirectory()) {
    options.logger.warn(
      { event_name: 'startup.static.missing', static_files_path: root },
      'static_files_path is not a directory: / shows a placeholder and /static/ answers 404',
    );
    return;
  }
  await app.register(fastifyStatic, {
    root,
    prefix: '/static/',
    list: { format: 'html', render: renderListing },
    // swagger-ui registers its own instance of the plugin.
    decorateReply: false,
    // A directory answers with its listing (docs/design/rules/operations.md §4.3), not with an index.html inside it.
    index: false,
  });
}

function eventTypeList(registry: SchemaRegistry): string {
  if (registry.eventTypes.length === 0) return '<li>No event types are configured.</li>';
  return registry.eventTypes
    .map((name) => `<li><a href="api/v1/schema/${encodeURIComponent(name)}"><code>${escapeHtml(name)}</code></a></li>`)
    .join('\n');
}

interface ListingEntry {
  readonly href: string;
  readonly name: string;
}

function renderListing(directories: readonly ListingEntry[], files: readonly ListingEntry[]): string {
  const items = [...directories.map((d) => ({ ...d, name: `${d.name}/` })), ...files]
    .map((entry) => `<li><a href="${escapeHtml(entry.href)}">${escapeHtml(entry.name)}</a></li>`)
    .join('');
  return `<!doctype html><html><head><meta charset="utf-8"><title>Index</title></head><body><ul>${items}</ul></body></html>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
