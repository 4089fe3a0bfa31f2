import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Logger } from 'pino';

/**
 * The operator console at `/console/` (docs/console.md, docs/design/rules/browser.md §4): the page, its stylesheet
 * and compiled modules from `dist/console/` (built by `npm run build:console` next to the server,
 * so `npm start` and the container serve the same files, whatever `static_files_path` says), and
 * the `eventsource-parser` package's ESM build at `/console/vendor/eventsource-parser.js`. Files
 * are read once at startup; nothing is fetched from anywhere else.
 */

/** `dist/src/http/routes/` → `dist/console/` (the console's tsconfig writes there). */
const CONSOLE_DIR = fileURLToPath(new URL('../../../console/', import.meta.url));
const VENDOR_PATH = '/console/vendor/eventsource-parser.js';

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
};

/** Same-origin only: the console loads and talks to this server and nothing else. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

interface ConsoleFile {
  readonly type: string;
  readonly body: string;
}

export function registerConsoleRoutes(app: FastifyInstance, logger: Logger, directory = CONSOLE_DIR): void {
  const files = readConsoleFiles(directory);
  const index = files.get('index.html');
  if (!index) {
    logger.warn(
      { event_name: 'startup.console.missing', console_path: directory },
      'The console is not built (run npm run build:console): /console/ answers 404',
    );
    return;
  }
  const vendor = readVendorParser(logger);
  if (vendor) files.set('vendor/eventsource-parser.js', vendor);

  const send = (reply: FastifyReply, file: ConsoleFile) =>
    reply
      .type(file.type)
      .header('Cache-Control', 'no-cache')
      .header('Content-Security-Policy', CONTENT_SECURITY_POLICY)
      .header('X-Content-Type-Options', 'nosniff')
      .send(file.body);

  app.get('/console', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/console/', 301));
  app.get('/console/', { schema: { hide: true } }, async (_request, reply) => send(reply, index));
  for (const [name, file] of files) {
    if (name === 'index.html') continue;
    app.get(`/console/${name}`, { schema: { hide: true } }, async (_request, reply) => send(reply, file));
  }
}

/** The page, the stylesheet and the modules: every `.html`, `.css` and `.js` of the directory. */
function readConsoleFiles(directory: string): Map<string, ConsoleFile> {
  const files = new Map<string, ConsoleFile>();
  if (!existsSync(directory)) return files;
  for (const name of readdirSync(directory).sort()) {
    const type = TYPES[extname(name)];
    if (type) files.set(name, { type, body: readFileSync(join(directory, name), 'utf8') });
  }
  return files;
}

/**
 * The package's self-contained ESM build, as installed (a runtime dependency), without its
 * source-map comment: the map is not served, so the browser must not ask for it.
 */
function readVendorParser(logger: Logger): ConsoleFile | undefined {
  try {
    const path = fileURLToPath(import.meta.resolve('eventsource-parser'));
    const body = readFileSync(path, 'utf8').replace(/^\/\/# sourceMappingURL=.*$/m, '');
    return { type: TYPES['.js']!, body };
  } catch (error) {
    logger.warn(
      { event_name: 'startup.console.vendor_missing', path: VENDOR_PATH, error: error instanceof Error ? error.message : String(error) },
      'eventsource-parser is not installed: the console cannot read streams',
    );
    return undefined;
  }
}
