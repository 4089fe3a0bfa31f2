import type * as FsPromises from 'node:fs/promises';
import type * as NodePath from 'node:path';
import { StateStoreError } from '../errors.js';
import { withFileLock } from './file-lock.js';
import { KEY_FORMAT_VERSION, KEY_FORMAT_VERSIONS } from './resume-key.js';
import type { Checkpoint, StateStore } from './store.js';

/** Format version of the document itself (the aviso client's `version`). */
export const STATE_FILE_VERSION = 1;

interface FileCheckpoint {
  last_committed_sequence: number;
  last_event_id: string | null;
}

interface StateDocument {
  version: number;
  key_format_version: number;
  checkpoints: Record<string, FileCheckpoint>;
}

/** Node modules loaded on first use, so importing the library in a browser never touches them. */
async function nodeModules(): Promise<{ fs: typeof FsPromises; path: typeof NodePath }> {
  const [fs, path] = await Promise.all([import('node:fs/promises'), import('node:path')]);
  return { fs, path };
}

/**
 * The aviso client's state file (`{"version":1,"key_format_version":1,"checkpoints":{...}}`), so
 * the Rust `aviso` and this library share one file. Every put runs under the aviso client's own
 * lock (an exclusive `flock` on `<path>.lock`, file-lock.ts), re-reads the file, merges
 * monotonically (the higher sequence wins, every other key is kept; a `rewind` after a reset
 * numbering replaces its one key) and replaces the file
 * atomically (temp file, fsync, rename, fsync of the directory). Puts of one store are also
 * serialised inside the process. The parent directory must exist; the file and its lock are
 * created on the first put.
 *
 * A file keeps the `key_format_version` it was created with (1 or 2, the two recipes the aviso
 * client has written): the store reports it through `keyFormatVersion()`, pinned at the first
 * call, so watches compute their keys with that recipe and the Rust client that wrote the file
 * still reads it. A file whose version changes under a running store is an error, never
 * overwritten.
 */
export class JsonFileStore implements StateStore {
  private pinned: Promise<number> | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly path: string) {}

  keyFormatVersion(): Promise<number> {
    this.pinned ??= this.read().then((document) => document?.key_format_version ?? KEY_FORMAT_VERSION);
    return this.pinned;
  }

  async get(key: string): Promise<Checkpoint | undefined> {
    const document = await this.read();
    const entry = document?.checkpoints[key];
    return entry === undefined ? undefined : { lastCommittedSequence: entry.last_committed_sequence, lastEventId: entry.last_event_id };
  }

  put(key: string, checkpoint: Checkpoint): Promise<void> {
    return this.enqueue(() => this.writeLocked(key, checkpoint, 'forward'));
  }

  /** Writes the checkpoint whatever the stored one (a reset numbering), under the same lock and merge of the other keys. */
  rewind(key: string, checkpoint: Checkpoint): Promise<void> {
    return this.enqueue(() => this.writeLocked(key, checkpoint, 'replace'));
  }

  private enqueue(write: () => Promise<void>): Promise<void> {
    const run = this.queue.then(write);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async writeLocked(key: string, checkpoint: Checkpoint, mode: 'forward' | 'replace'): Promise<void> {
    const keyVersion = await this.keyFormatVersion();
    const { fs, path } = await nodeModules();
    try {
      await withFileLock(this.path, async () => {
        const document = (await this.read()) ?? { version: STATE_FILE_VERSION, key_format_version: keyVersion, checkpoints: {} };
        if (document.key_format_version !== keyVersion) {
          throw new StateStoreError(
            `state file ${this.path} now uses key_format_version ${document.key_format_version}, but this process computed its keys with ${keyVersion}; restart it`,
          );
        }
        const current = document.checkpoints[key];
        if (current !== undefined && mode === 'forward' && current.last_committed_sequence >= checkpoint.lastCommittedSequence) return;
        document.checkpoints[key] = { last_committed_sequence: checkpoint.lastCommittedSequence, last_event_id: checkpoint.lastEventId };
        await this.writeAtomically(fs, path, `${JSON.stringify(document, null, 2)}\n`);
      });
    } catch (error) {
      throw error instanceof StateStoreError ? error : new StateStoreError(`cannot write state file ${this.path}: ${(error as Error).message}`, { cause: error });
    }
  }

  private async read(): Promise<StateDocument | undefined> {
    const { fs } = await nodeModules();
    let text: string;
    try {
      text = await fs.readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new StateStoreError(`cannot read state file ${this.path}: ${(error as Error).message}`, { cause: error });
    }
    return parseStateDocument(text, this.path);
  }

  private async writeAtomically(fs: typeof FsPromises, path: typeof NodePath, text: string): Promise<void> {
    const directory = path.dirname(this.path);
    const temp = path.join(directory, `.${path.basename(this.path)}.${process.pid}.${Date.now()}.tmp`);
    const handle = await fs.open(temp, 'w', 0o600);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await fs.rename(temp, this.path);
    } catch (error) {
      await fs.rm(temp, { force: true });
      throw error;
    }
    // The rename is durable only once the directory entry is.
    const dir = await fs.open(directory, 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }
}

/** Validates the document as the aviso client does (exact `version`; a `key_format_version` this client computes). */
export function parseStateDocument(text: string, path: string): StateDocument {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new StateStoreError(`state file ${path} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new StateStoreError(`state file ${path} is not a JSON object`);
  const record = value as Record<string, unknown>;
  if (record.version !== STATE_FILE_VERSION) {
    throw new StateStoreError(`state file format version ${String(record.version)} does not match supported version ${STATE_FILE_VERSION}`);
  }
  const keyVersion = record.key_format_version;
  if (typeof keyVersion !== 'number' || !KEY_FORMAT_VERSIONS.includes(keyVersion)) {
    throw new StateStoreError(`state file uses key_format_version ${String(keyVersion)}; this client uses ${KEY_FORMAT_VERSIONS.join(' or ')}`);
  }
  const checkpoints = record.checkpoints;
  if (checkpoints === null || typeof checkpoints !== 'object' || Array.isArray(checkpoints)) {
    throw new StateStoreError(`state file ${path}: checkpoints must be an object`);
  }
  const result: Record<string, FileCheckpoint> = {};
  for (const [key, entry] of Object.entries(checkpoints as Record<string, unknown>)) {
    const item = entry as Record<string, unknown> | null;
    const sequence = item?.last_committed_sequence;
    const eventId = item?.last_event_id;
    if (!/^[0-9a-f]{64}$/.test(key) || typeof sequence !== 'number' || !Number.isSafeInteger(sequence) || sequence < 0 || (eventId !== null && eventId !== undefined && typeof eventId !== 'string')) {
      throw new StateStoreError(`state file ${path}: checkpoint ${key} is malformed`);
    }
    result[key] = { last_committed_sequence: sequence, last_event_id: eventId ?? null };
  }
  return { version: STATE_FILE_VERSION, key_format_version: keyVersion, checkpoints: result };
}
