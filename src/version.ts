import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package version, reported in logs, the homepage and the OpenAPI document. */
export const SERVER_VERSION: string = readPackageVersion();

/** Walks up from this file, which lives in `src/` when run from source and `dist/src/` when built. */
function readPackageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'aviso-ts' && pkg.version) return pkg.version;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('package.json of aviso-ts not found');
    dir = parent;
  }
}
