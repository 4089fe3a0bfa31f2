import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually } from '../../../../test/support/eventually.js';
import { reapOnExit } from '../../../../test/support/child-reaper.js';
import { JsonFileStore } from '../../src/index.js';
import { withFileLock } from '../../src/state/file-lock.js';

/**
 * The state file's lock is the aviso client's own: an exclusive flock(2) on `<state>.lock`.
 * util-linux `flock` stands in for the Rust `aviso` (it takes the same lock on the same file);
 * two of our own processes race on one file. The built library is what the child processes run.
 */
const DIST = resolve(import.meta.dirname, '../../dist/index.js');
const fresh = (): string => join(mkdtempSync(join(tmpdir(), 'aviso-lock-')), 'state.json');
const KEY_A = 'a'.repeat(64);
const KEY_B = 'b'.repeat(64);
const KEY_C = 'c'.repeat(64);

/** Whether this process has `path` open (our put opened the lock file and is waiting for it). */
function openHere(path: string): boolean {
  return readdirSync('/proc/self/fd').some((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path;
    } catch {
      return false;
    }
  });
}

describe('one lock with the Rust client', () => {
  it('is held on <state>.lock while a put writes: util-linux flock -n cannot take it', async () => {
    const path = fresh();
    const seen = await withFileLock(path, () => Promise.resolve(spawnSync('flock', ['-n', `${path}.lock`, 'true']).status));
    expect(seen).not.toBe(0);
    expect(spawnSync('flock', ['-n', `${path}.lock`, 'true']).status).toBe(0);
    expect(statSync(`${path}.lock`).isFile()).toBe(true);
  });

  it('waits while another process holds the flock, then merges what that process wrote', async () => {
    const path = fresh();
    const lock = `${path}.lock`;
    writeFileSync(
      path,
      JSON.stringify({
        version: 1,
        key_format_version: 1,
        checkpoints: { [KEY_A]: { last_committed_sequence: 3, last_event_id: 'mars@3' } },
      }),
    );
    const holder = spawn('flock', ['-x', lock, 'sh', '-c', 'echo held; read line'], { stdio: ['pipe', 'pipe', 'inherit'] });
    reapOnExit(holder);
    let out = '';
    holder.stdout.on('data', (c: Buffer) => (out += c.toString()));
    await eventually('the other process to hold the lock', () => out.includes('held'));

    let settled = false;
    const put = new JsonFileStore(path).put(KEY_B, { lastCommittedSequence: 7, lastEventId: 'mars@7' }).finally(() => (settled = true));
    await eventually('our put to wait for the lock', () => openHere(lock));
    // The other client's critical section: it rewrites the file while it holds the lock.
    writeFileSync(
      path,
      JSON.stringify({
        version: 1,
        key_format_version: 1,
        checkpoints: {
          [KEY_A]: { last_committed_sequence: 10, last_event_id: 'mars@10' },
          [KEY_C]: { last_committed_sequence: 5, last_event_id: 'wave@5' },
        },
      }),
    );
    expect(settled).toBe(false);
    holder.stdin.end('\n');
    await put;
    expect(JSON.parse(readFileSync(path, 'utf8')).checkpoints).toEqual({
      [KEY_A]: { last_committed_sequence: 10, last_event_id: 'mars@10' },
      [KEY_B]: { last_committed_sequence: 7, last_event_id: 'mars@7' },
      [KEY_C]: { last_committed_sequence: 5, last_event_id: 'wave@5' },
    });
    expect(existsSync(lock)).toBe(true);
  });

  it('two of our processes writing at once: the highest sequence wins and no key is lost', async () => {
    expect(existsSync(DIST), 'run `npm run build` first').toBe(true);
    const path = fresh();
    const writer = (id: number): Promise<number | null> => {
      const script = `
        const { JsonFileStore } = await import(${JSON.stringify(DIST)});
        const store = new JsonFileStore(${JSON.stringify(path)});
        const own = String(${id}).repeat(64);
        for (let i = 0; i < 60; i++) {
          await Promise.all([
            store.put(${JSON.stringify(KEY_A)}, { lastCommittedSequence: 2 * i + ${id}, lastEventId: 'mars@' + (2 * i + ${id}) }),
            store.put(own, { lastCommittedSequence: i, lastEventId: null }),
          ]);
        }`;
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'inherit', 'inherit'] });
      reapOnExit(child);
      return new Promise((r) => child.on('close', r));
    };
    expect(await Promise.all([writer(0), writer(1)])).toEqual([0, 0]);
    const document = JSON.parse(readFileSync(path, 'utf8')) as { checkpoints: Record<string, { last_committed_sequence: number }> };
    expect(document.checkpoints[KEY_A]?.last_committed_sequence).toBe(119);
    expect(document.checkpoints['0'.repeat(64)]?.last_committed_sequence).toBe(59);
    expect(document.checkpoints['1'.repeat(64)]?.last_committed_sequence).toBe(59);
  });
});
