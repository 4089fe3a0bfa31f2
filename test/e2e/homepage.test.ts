import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverConfig, TEST_SCHEMAS } from '../support/schemas.js';
import { runServerToExit, startServer, type RunningServer } from '../support/server-process.js';

/**
 * The homepage, the static files, the OpenAPI document and the Swagger UI against the real
 * server process (docs/design/rules/operations.md §4.3–§4.4, docs/design/rules/api.md §8.7–§8.9).
 *
 * Servers:
 * - `open`: in-memory, auth disabled, `static_files_path` = the repository's `static/`;
 * - `secured`: the same with auth enabled (trusted_proxy): every page here stays public;
 * - `missing`: `static_files_path` names a directory that does not exist.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const STATIC_DIR = join(ROOT, 'static');
const PACKAGE_VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const EVENT_TYPES = Object.keys(TEST_SCHEMAS).sort();
const INDEX_NOT_FOUND = '<h1>Index file not found</h1><p>Please check the static files configuration.</p>';

/** Every documented path and its methods (docs/design/rules/operations.md §4.4). */
const DOCUMENTED_ROUTES: Readonly<Record<string, readonly string[]>> = {
  '/': ['get'],
  '/health': ['get'],
  '/ready': ['get'],
  '/api/v1/schema': ['get'],
  '/api/v1/schema/{event_type}': ['get'],
  '/api/v1/notification': ['post'],
  '/api/v1/notification/batch': ['post'],
  '/api/v1/watch': ['get', 'post'],
  '/api/v1/replay': ['get', 'post'],
  '/api/v1/admin/wipe/stream': ['delete'],
  '/api/v1/admin/wipe/all': ['delete'],
  '/api/v1/admin/notification/{notification_id}': ['delete'],
  '/api/v1/admin/reload': ['post'],
  '/api/v1/admin/streams': ['get'],
  '/api/v1/admin/streams/{id}': ['delete'],
};

const COMPONENT_SCHEMAS = [
  'HealthResponse',
  'ReadyResponse',
  'NotReadyResponse',
  'NotificationRequest',
  'NotificationResponse',
  'NotificationBatchResult',
  'NotificationBatchResponse',
  'ApiEventSchema',
  'PayloadConfig',
  'WipeStreamRequest',
  'WipeResponse',
  'DeleteNotificationResponse',
  'ReloadResponse',
  'OpenStream',
  'OpenStreamsResponse',
  'CloseStreamResponse',
];

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

interface OpenApiOperation {
  readonly tags?: readonly string[];
  readonly security?: readonly Record<string, readonly string[]>[];
  readonly responses?: Record<string, unknown>;
}

interface OpenApiDocument {
  readonly openapi: string;
  readonly info: Record<string, unknown>;
  readonly tags?: readonly { name: string }[];
  readonly paths: Record<string, Record<string, OpenApiOperation>>;
  readonly components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
}

/** The defaults of `application.homepage` (D29), in page order. */
const DEFAULT_LINKS = [
  'https://sites.ecmwf.int/docs/aviso-client/main/',
  'https://github.com/ecmwf/aviso-client',
  'https://github.com/aviso-ts/aviso-ts/tree/main/docs',
  'https://github.com/aviso-ts/aviso-ts',
];

/** Links with characters that must be escaped in HTML, set on the `secured` server (one through the environment). */
const CUSTOM_LINKS = {
  client_documentation_url: 'https://docs.example.int/client?a=1&b="2"',
  client_repository_url: "https://git.example.int/client'repo",
  server_documentation_url: 'https://docs.example.int/server/<docs>',
  server_repository_url: 'http://git.example.int:8080/server',
};

function securedConfig(): Record<string, unknown> {
  const { server_repository_url: _fromEnv, ...fromFile } = CUSTOM_LINKS;
  return serverConfig({
    application: { host: '127.0.0.1', port: 0, base_url: 'http://localhost:8000', static_files_path: STATIC_DIR, homepage: fromFile },
    auth: {
      enabled: true,
      mode: 'trusted_proxy',
      jwt_secret: 'homepage-test-secret',
      admin_roles: { localrealm: ['admin'] },
    },
  });
}

/** Values of `attribute="…"` on every tag of an HTML text. */
function attributeValues(html: string, attribute: 'href' | 'src'): string[] {
  return [...html.matchAll(new RegExp(`\\s${attribute}="([^"]*)"`, 'g'))].map((m) => m[1] ?? '');
}

function isExternal(reference: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(reference) || reference.startsWith('//');
}

async function get(url: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await fetch(url, { redirect: 'manual', ...init });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

let open: RunningServer;
let secured: RunningServer;
let missing: RunningServer;

beforeAll(async () => {
  [open, secured, missing] = await Promise.all([
    startServer({
      config: serverConfig({
        application: { host: '127.0.0.1', port: 0, base_url: 'http://localhost:8000', static_files_path: STATIC_DIR },
      }),
    }),
    startServer({
      config: securedConfig(),
      env: { AVISOSERVER_APPLICATION__HOMEPAGE__SERVER_REPOSITORY_URL: CUSTOM_LINKS.server_repository_url },
    }),
    startServer({
      config: serverConfig({
        application: {
          host: '127.0.0.1',
          port: 0,
          base_url: 'http://localhost:8000',
          static_files_path: join(ROOT, 'no-such-static-directory'),
        },
      }),
    }),
  ]);
});

afterAll(async () => {
  await Promise.all([open, secured, missing].filter(Boolean).map((server) => server.stop()));
});

describe('GET / (docs/design/rules/operations.md §4.3, docs/design/rules/api.md §8.7)', () => {
  it('is an HTML page naming the service and the package version', async () => {
    const response = await get(`${open.url}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.text).toMatch(/<title>[^<]*Aviso[^<]*<\/title>/i);
    expect(response.text).toContain(PACKAGE_VERSION);
    expect(response.text).not.toContain('{{SERVER_VERSION}}');
    expect(response.text).not.toContain('{{EVENT_TYPES}}');
  });

  it('lists every configured event type with a link to its schema, and each link answers 200', async () => {
    const response = await get(`${open.url}/`);
    const base = `${open.url}/`;
    const schemaLinks = attributeValues(response.text, 'href').filter((href) => href.includes('api/v1/schema/'));
    expect(schemaLinks.map((href) => decodeURIComponent(href.replace(/^.*api\/v1\/schema\//, ''))).sort()).toEqual(EVENT_TYPES);
    for (const href of schemaLinks) {
      const url = new URL(href, base);
      expect(url.origin).toBe(new URL(base).origin);
      const schema = await get(url.href);
      expect(schema.status, url.href).toBe(200);
      expect((JSON.parse(schema.text) as { event_type: string }).event_type).toBe(decodeURIComponent(url.pathname.split('/').pop() ?? ''));
    }
  });

  it('links to the API documentation and loads nothing from elsewhere; its only external links are the homepage links', async () => {
    const { text } = await get(`${open.url}/`);
    const links = attributeValues(text, 'href');
    const sources = attributeValues(text, 'src');
    expect(sources.filter(isExternal)).toEqual([]);
    expect(links.filter(isExternal)).toEqual(DEFAULT_LINKS);
    expect(links).toContain('swagger-ui/');
    for (const reference of [...links.filter((link) => !isExternal(link)), ...sources]) {
      const target = await get(new URL(reference, `${open.url}/`).href);
      expect(target.status, reference).toBe(200);
    }
  });

  it('shows "Use aviso" (client links), then "Operate the server" (server links), then the API reference (D29)', async () => {
    const { text } = await get(`${open.url}/`);
    const positions = [
      text.indexOf('<h2>Use aviso</h2>'),
      text.indexOf(`href="${DEFAULT_LINKS[0]}"`),
      text.indexOf(`href="${DEFAULT_LINKS[1]}"`),
      // This repository's own client, beside ECMWF's.
      text.indexOf('<code>@aviso-ts/client</code> library and its <code>aviso</code> command'),
      text.indexOf('<h2>Operate the server</h2>'),
      text.indexOf(`href="${DEFAULT_LINKS[2]}"`),
      text.indexOf(`href="${DEFAULT_LINKS[3]}"`),
      text.indexOf('href="swagger-ui/"'),
    ];
    expect(
      positions.every((position) => position >= 0),
      JSON.stringify(positions),
    ).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });

  it('takes the links from application.homepage and its environment override, HTML-escaped', async () => {
    const { text } = await get(`${secured.url}/`);
    expect(attributeValues(text, 'href').filter(isExternal)).toEqual([
      'https://docs.example.int/client?a=1&#38;b=&#34;2&#34;',
      'https://git.example.int/client&#39;repo',
      'https://docs.example.int/server/&#60;docs&#62;',
      'http://git.example.int:8080/server',
    ]);
    expect(text).not.toContain('<docs>');
    expect(text).not.toMatch(/\{\{[A-Z_]+\}\}/);
  });

  it('reads index.html on each request: with a static_files_path that does not exist it is the fixed placeholder', async () => {
    const response = await get(`${missing.url}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.text).toBe(INDEX_NOT_FOUND);
  });
});

describe('application.homepage at startup (D29)', () => {
  it('refuses a link that is not an absolute http(s) URL, without echoing it', async () => {
    const secret = 'https://operator:hunter2@docs.example.int/';
    const result = await runServerToExit({
      config: serverConfig({ application: { host: '127.0.0.1', port: 0, homepage: { server_documentation_url: secret } } }),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'aviso-server: configuration error: application.homepage.server_documentation_url must be an absolute HTTP(S) URL with a host and no embedded credentials\n',
    );
    expect(result.stdout + result.stderr).not.toContain('hunter2');
  });
});

describe('/static/ (docs/design/rules/operations.md §4.3, docs/design/rules/api.md §8.8)', () => {
  it('serves the files of static_files_path', async () => {
    const response = await get(`${open.url}/static/logo.svg`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(response.text).toBe(readFileSync(join(STATIC_DIR, 'logo.svg'), 'utf8'));
  });

  it('lists a directory', async () => {
    const response = await get(`${open.url}/static/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.text).toContain('logo.svg');
    expect(response.text).toContain('index.html');
  });

  it('answers 404 for a missing file', async () => {
    const response = await get(`${open.url}/static/missing`);
    expect(response.status).toBe(404);
    expect((JSON.parse(response.text) as { code: string }).code).toBe('NOT_FOUND');
  });

  it('answers 404 under /static/ when static_files_path does not exist', async () => {
    expect((await get(`${missing.url}/static/logo.svg`)).status).toBe(404);
  });
});

describe('GET /api-docs/openapi.json (docs/design/rules/operations.md §4.4, docs/design/rules/api.md §8.9)', () => {
  let text: string;
  let document: OpenApiDocument;

  beforeAll(async () => {
    const response = await get(`${open.url}/api-docs/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    text = response.text;
    document = JSON.parse(text) as OpenApiDocument;
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(document.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document) as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('has the info, tags and security schemes of docs/design/rules/operations.md §4.4', () => {
    expect(document.info).toEqual({
      title: 'Aviso Notification Service API',
      version: PACKAGE_VERSION,
      description: 'Real-time notification service developed by ECMWF',
      contact: { name: 'Aviso API Support', url: 'https://www.ecmwf.int/en/about/contact-us' },
      license: { name: 'Apache 2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
    });
    expect((document.tags ?? []).map((tag) => tag.name)).toEqual(['health', 'general', 'schema', 'notification', 'streaming', 'admin']);
    expect(document.components.securitySchemes).toEqual({
      bearer_jwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      basic: { type: 'http', scheme: 'basic' },
    });
  });

  it('documents every route with its methods', () => {
    const documented = Object.fromEntries(
      Object.entries(document.paths).map(([path, item]) => [
        path,
        Object.keys(item)
          .filter((key) => HTTP_METHODS.has(key))
          .sort(),
      ]),
    );
    expect(documented).toEqual(DOCUMENTED_ROUTES);
  });

  it('tags every operation with one of the declared tags', () => {
    const tags = new Set((document.tags ?? []).map((tag) => tag.name));
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        expect(operation.tags?.length, `${method} ${path}`).toBeGreaterThan(0);
        for (const tag of operation.tags ?? []) expect(tags.has(tag), `${method} ${path}: ${tag}`).toBe(true);
      }
    }
  });

  it('lists "no auth, bearer_jwt or basic" on notify/watch/replay and "bearer_jwt or basic" on admin routes', () => {
    const optional = [{}, { bearer_jwt: [] }, { basic: [] }];
    const required = [{ bearer_jwt: [] }, { basic: [] }];
    expect(document.paths['/api/v1/notification']?.post?.security).toEqual(optional);
    expect(document.paths['/api/v1/watch']?.post?.security).toEqual(optional);
    expect(document.paths['/api/v1/replay']?.post?.security).toEqual(optional);
    expect(document.paths['/api/v1/watch']?.get?.security).toEqual(optional);
    expect(document.paths['/api/v1/replay']?.get?.security).toEqual(optional);
    expect(document.paths['/api/v1/admin/wipe/stream']?.delete?.security).toEqual(required);
    expect(document.paths['/api/v1/admin/wipe/all']?.delete?.security).toEqual(required);
    expect(document.paths['/api/v1/admin/notification/{notification_id}']?.delete?.security).toEqual(required);
    expect(document.paths['/api/v1/admin/reload']?.post?.security).toEqual(required);
    expect(document.paths['/api/v1/admin/streams']?.get?.security).toEqual(required);
    expect(document.paths['/api/v1/admin/streams/{id}']?.delete?.security).toEqual(required);
  });

  it('documents 401, 403 and 503 on the streaming and admin routes', () => {
    const operations = [
      document.paths['/api/v1/watch']?.post,
      document.paths['/api/v1/replay']?.post,
      document.paths['/api/v1/watch']?.get,
      document.paths['/api/v1/replay']?.get,
      document.paths['/api/v1/admin/wipe/stream']?.delete,
      document.paths['/api/v1/admin/wipe/all']?.delete,
      document.paths['/api/v1/admin/notification/{notification_id}']?.delete,
      document.paths['/api/v1/admin/reload']?.post,
      document.paths['/api/v1/admin/streams']?.get,
      document.paths['/api/v1/admin/streams/{id}']?.delete,
    ];
    for (const operation of operations) {
      expect(Object.keys(operation?.responses ?? {})).toEqual(expect.arrayContaining(['200', '401', '403', '503']));
    }
  });

  it('has the component schemas named in docs/design/rules/operations.md §4.4', () => {
    expect(Object.keys(document.components.schemas)).toEqual(expect.arrayContaining(COMPONENT_SCHEMAS));
  });

  it('equals the committed schemas/openapi.json', () => {
    expect(JSON.parse(text)).toEqual(JSON.parse(readFileSync(join(ROOT, 'schemas/openapi.json'), 'utf8')));
  });
});

describe('/swagger-ui/ (docs/design/rules/operations.md §4.4)', () => {
  it('serves the UI, whose assets come from this server and answer 200', async () => {
    const page = await get(`${open.url}/swagger-ui/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.text).toContain('id="swagger-ui"');
    const references = [...attributeValues(page.text, 'href'), ...attributeValues(page.text, 'src')];
    expect(references.filter(isExternal)).toEqual([]);
    const scripts = attributeValues(page.text, 'src');
    const styles = attributeValues(page.text, 'href').filter((href) => href.endsWith('.css'));
    expect(scripts.some((src) => src.endsWith('swagger-ui-bundle.js'))).toBe(true);
    expect(scripts.some((src) => src.endsWith('swagger-initializer.js'))).toBe(true);
    expect(styles.length).toBeGreaterThan(0);
    for (const reference of references) {
      const url = new URL(reference, `${open.url}/swagger-ui/`);
      expect(url.origin).toBe(open.url);
      const asset = await fetch(url);
      await asset.arrayBuffer();
      expect(asset.status, url.href).toBe(200);
    }
  });

  it('does not make browsers upgrade its own asset requests to https (the server speaks plain HTTP)', async () => {
    // With `upgrade-insecure-requests`, a browser reaching the server over http on any host other
    // than loopback (a container, a cluster address) fetches the UI's assets over https and
    // renders an empty page. Loopback is exempt, which is why a browser test on 127.0.0.1 cannot see it.
    for (const path of ['/swagger-ui/', '/']) {
      const response = await get(`${open.url}${path}`);
      expect(response.headers.get('content-security-policy') ?? '', path).not.toMatch(/upgrade-insecure-requests/i);
    }
  });

  it('has an initializer pointing at the OpenAPI document of this server, with no external URL in its configuration', async () => {
    const page = await get(`${open.url}/swagger-ui/`);
    const initializerSrc = attributeValues(page.text, 'src').find((src) => src.endsWith('swagger-initializer.js'));
    expect(initializerSrc).toBeDefined();
    const initializerUrl = new URL(initializerSrc ?? '', `${open.url}/swagger-ui/`);
    const initializer = await get(initializerUrl.href);
    expect(initializer.status).toBe(200);

    // `url: resolveUrl('<relative>')` (resolved against the page) or a plain `url: '<path>'`.
    const match = /\burl:\s*(?:resolveUrl\(\s*)?['"]([^'"]+)['"]/.exec(initializer.text);
    expect(match, initializer.text).not.toBeNull();
    const documentUrl = new URL(match?.[1] ?? '', `${open.url}/swagger-ui/`);
    expect(documentUrl.origin).toBe(open.url);
    const served = await get(documentUrl.href);
    expect(served.status, documentUrl.href).toBe(200);
    const official = await get(`${open.url}/api-docs/openapi.json`);
    expect(JSON.parse(served.text)).toEqual(JSON.parse(official.text));

    // No online validator badge and no configuration URL elsewhere.
    expect(initializer.text).toMatch(/validatorUrl:\s*null/);
    expect(initializer.text).not.toMatch(/\b(?:url|configUrl|validatorUrl):\s*['"]https?:/);
  });
});

describe('documentation pages with auth enabled', () => {
  it('are public: no credentials needed', async () => {
    const page = await get(`${secured.url}/swagger-ui/`);
    const assets = attributeValues(page.text, 'src').map((src) => new URL(src, `${secured.url}/swagger-ui/`).href);
    const urls = [
      `${secured.url}/`,
      `${secured.url}/static/logo.svg`,
      `${secured.url}/static/`,
      `${secured.url}/api-docs/openapi.json`,
      `${secured.url}/swagger-ui/`,
      ...assets,
    ];
    for (const url of urls) {
      const response = await get(url);
      expect(response.status, url).toBe(200);
      expect(response.headers.get('www-authenticate'), url).toBeNull();
    }
    const home = await get(`${secured.url}/`);
    expect(home.text).toContain(PACKAGE_VERSION);
  });

  it('ignore credentials, even invalid ones', async () => {
    for (const path of ['/', '/static/logo.svg', '/api-docs/openapi.json', '/swagger-ui/']) {
      const response = await get(`${secured.url}${path}`, { headers: { authorization: 'Bearer not-a-jwt' } });
      expect(response.status, path).toBe(200);
    }
  });

  it('serve the same OpenAPI document whatever the configuration', async () => {
    const fromOpen = await get(`${open.url}/api-docs/openapi.json`);
    const fromSecured = await get(`${secured.url}/api-docs/openapi.json`);
    expect(JSON.parse(fromSecured.text)).toEqual(JSON.parse(fromOpen.text));
  });
});
