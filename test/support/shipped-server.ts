import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { findFreePort } from './ports.js';
import { startServer, type RunningServer } from './server-process.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** config/config.yaml as the repository ships it: what `npm start` serves and the docs' examples use. */
export const SHIPPED_CONFIG = readFileSync(join(ROOT, 'config', 'config.yaml'), 'utf8');

/**
 * The built server on the shipped configuration, changed only by environment variables as the
 * docs change it: a free port instead of 8000 (a developer's server may hold it), the repository's
 * static files (the test server runs in a temporary directory), and, given a NATS URL, the two
 * variables docs/getting-started.md "Run on NATS JetStream" sets.
 */
export async function startShippedServer(options: { readonly natsUrl?: string } = {}): Promise<RunningServer> {
  const env: Record<string, string> = {
    AVISOSERVER_APPLICATION__PORT: String(await findFreePort()),
    AVISOSERVER_APPLICATION__STATIC_FILES_PATH: join(ROOT, 'static'),
  };
  if (options.natsUrl !== undefined) {
    env.AVISOSERVER_NOTIFICATION_BACKEND__KIND = 'jetstream';
    env.AVISOSERVER_NOTIFICATION_BACKEND__JETSTREAM__NATS_URL = options.natsUrl;
  }
  return startServer({ config: SHIPPED_CONFIG, env });
}
