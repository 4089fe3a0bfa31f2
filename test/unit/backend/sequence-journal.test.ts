import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  RESERVATION_BLOCK,
  SequenceJournalError,
  openSequenceJournal,
  type SequenceJournal,
} from '../../../src/backend/memory/sequence-journal.js';
import { thrownError } from '../../support/thrown-error.js';

/**
 * The in-memory numbering's journal (D40): what the next process continues after, after a clean
 * stop, after a kill (the journal was never closed), and after a machine restart (only the
 * reservations count); one process per directory; a directory that cannot hold it is refused.
 */

const dirs: string[] = [];
const open: SequenceJournal[] = [];

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'aviso-journal-'));
  dirs.push(dir);
  return dir;
}

function journalIn(dir: string): SequenceJournal {
  const journal = openSequenceJournal(dir);
  open.push(journal);
  return journal;
}

/** What a killed process leaves: the files as written, the lock naming a process that is gone. */
function abandon(dir: string): void {
  writeFileSync(join(dir, 'lock'), '2147483646\n');
}

/** The header as a process of another boot of the machine wrote it. */
function pretendOtherBoot(dir: string): void {
  const path = join(dir, 'sequences');
  const text = readFileSync(path);
  const header = 'aviso-ts sequences 1 boot=linux:00000000-0000-0000-0000-000000000000'.padEnd(95, ' ') + '\n';
  text.write(header, 0, 'latin1');
  writeFileSync(path, text);
}

afterEach(() => {
  for (const journal of open.splice(0)) journal.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('the sequence journal', () => {
  it('starts empty in a new directory, which it creates', () => {
    const dir = join(freshDir(), 'nested', 'state');
    const journal = journalIn(dir);
    expect([...journal.restored]).toEqual([]);
    expect(journal.afterMachineRestart).toBe(false);
  });

  it('continues exactly where a stopped process left each stream', () => {
    const dir = freshDir();
    const first = journalIn(dir);
    for (let sequence = 1; sequence <= 3; sequence++) first.issued('MARS', sequence);
    first.issued('DISS', 1);
    first.close();
    const next = journalIn(dir);
    expect(Object.fromEntries(next.restored)).toEqual({ MARS: 3, DISS: 1 });
  });

  it('continues exactly after a process that was killed: nothing was closed, every write counted', () => {
    const dir = freshDir();
    const killed = openSequenceJournal(dir);
    for (let sequence = 1; sequence <= 2_500; sequence++) killed.issued('MARS', sequence);
    abandon(dir);
    const next = journalIn(dir);
    expect(next.restored.get('MARS')).toBe(2_500);
    expect(next.afterMachineRestart).toBe(false);
    killed.close();
  });

  it('after a machine restart continues after the reservation, so no number issued before can come again', () => {
    const dir = freshDir();
    const before = openSequenceJournal(dir);
    for (let sequence = 1; sequence <= 700; sequence++) before.issued('MARS', sequence);
    before.close();
    pretendOtherBoot(dir);
    const next = journalIn(dir);
    expect(next.afterMachineRestart).toBe(true);
    const restored = next.restored.get('MARS') as number;
    expect(restored).toBeGreaterThanOrEqual(700);
    expect(restored).toBeLessThanOrEqual(700 + RESERVATION_BLOCK);
  });

  it('keeps each stream on its own slot through many streams and restarts', () => {
    const dir = freshDir();
    let journal = openSequenceJournal(dir);
    for (let round = 1; round <= 3; round++) {
      for (let stream = 0; stream < 50; stream++) journal.issued(`S${stream}`, round * 10 + stream);
      journal.close();
      journal = openSequenceJournal(dir);
      expect(journal.restored.size).toBe(50);
      for (let stream = 0; stream < 50; stream++) expect(journal.restored.get(`S${stream}`)).toBe(round * 10 + stream);
    }
    journal.close();
  });

  it('names with any characters survive', () => {
    const dir = freshDir();
    const first = openSequenceJournal(dir);
    first.issued('A%0AB "quoted" é€', 9);
    first.close();
    expect(journalIn(dir).restored.get('A%0AB "quoted" é€')).toBe(9);
  });

  it('a streams file cut short in its last line neither loses nor shifts the others', () => {
    const dir = freshDir();
    const first = openSequenceJournal(dir);
    first.issued('A', 4);
    first.issued('B', 7);
    first.close();
    writeFileSync(join(dir, 'streams'), `${readFileSync(join(dir, 'streams'), 'utf8')}"C`);
    const second = openSequenceJournal(dir);
    expect(Object.fromEntries(second.restored)).toEqual({ A: 4, B: 7 });
    second.issued('D', 2);
    second.close();
    expect(Object.fromEntries(journalIn(dir).restored)).toEqual({ A: 4, B: 7, D: 2 });
  });

  it('refuses a directory another running process holds, naming that process', () => {
    const dir = freshDir();
    const holder = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      writeFileSync(join(dir, 'lock'), `${holder.pid}\n`);
      const error = thrownError(() => openSequenceJournal(dir), SequenceJournalError);
      expect(error.message).toBe(
        `notification_backend.in_memory.state_directory "${dir}" is in use by process ${holder.pid}: each in-memory server needs its own state_directory (remove ${join(dir, 'lock')} if that process is not an aviso-ts server)`,
      );
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('refuses a directory that cannot be created, in one line', () => {
    const file = join(freshDir(), 'a-file');
    writeFileSync(file, 'not a directory');
    const error = thrownError(() => openSequenceJournal(join(file, 'state')), SequenceJournalError);
    expect(error.message).toBe(`notification_backend.in_memory.state_directory "${join(file, 'state')}" cannot be created: ENOTDIR`);
  });

  it('refuses a sequences file it cannot read rather than guess', () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'sequences'), 'something else entirely\n');
    const error = thrownError(() => openSequenceJournal(dir), SequenceJournalError);
    expect(error.message).toContain('holds a sequences file this version cannot read');
  });

  it('releases the directory when closed, so the next process opens it', () => {
    const dir = freshDir();
    openSequenceJournal(dir).close();
    expect(() => journalIn(dir)).not.toThrow();
  });
});
