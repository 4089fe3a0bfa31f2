import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { pino, type Logger } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { registerConsoleRoutes } from '../../../src/http/routes/console-routes.js';

/** The console's routes over a directory of built files (the e2e test serves the real build). */

const directories: string[] = [];
afterAll(() => {
  for (const dir of directories.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function consoleDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'aviso-console-'));
  directories.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

function capturingLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}

describe('the console routes', () => {
  it('serve the page, its stylesheet and modules with their types and a same-origin CSP, and nothing else', async () => {
    const dir = consoleDir({ 'index.html': '<!doctype html>', 'console.css': 'body{}', 'main.js': 'export {}', 'notes.txt': 'private' });
    const app = Fastify();
    registerConsoleRoutes(app, capturingLogger().logger, dir);
    const page = await app.inject({ url: '/console/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    expect((await app.inject({ url: '/console/console.css' })).headers['content-type']).toBe('text/css; charset=utf-8');
    expect((await app.inject({ url: '/console/main.js' })).headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect((await app.inject({ url: '/console/notes.txt' })).statusCode).toBe(404);
    expect((await app.inject({ url: '/console/index.html' })).statusCode).toBe(404);
    const parser = await app.inject({ url: '/console/vendor/eventsource-parser.js' });
    expect(parser.statusCode).toBe(200);
    expect(parser.body).toContain('createParser');
    const redirect = await app.inject({ url: '/console' });
    expect([redirect.statusCode, redirect.headers.location]).toEqual([301, '/console/']);
    await app.close();
  });

  it('log one warning and register nothing when the console is not built', async () => {
    const { logger, lines } = capturingLogger();
    const app = Fastify();
    registerConsoleRoutes(app, logger, join(tmpdir(), 'aviso-console-missing-dir'));
    expect((await app.inject({ url: '/console/' })).statusCode).toBe(404);
    expect(lines.map((line) => line.event_name)).toEqual(['startup.console.missing']);
    await app.close();
  });
});
