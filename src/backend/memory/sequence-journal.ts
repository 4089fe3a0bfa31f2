import { closeSync, fdatasync, fsyncSync, mkdirSync, openSync, readFileSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { currentBootIdentity, isSameBoot } from './boot-identity.js';

/**
 * The last sequence issued for each stream base, written through to a small file on every notify,
 * so that the next process continues each base's numbering exactly where this one stopped, after
 * a SIGTERM, a SIGKILL or a crash of the process (D40). Those writes reach the kernel's page
 * cache, which outlives the process; nothing on the notify path waits for the disk.
 *
 * A machine crash can lose what the page cache had not yet flushed. For that case each base also
 * keeps a reservation, made durable (fdatasync) before any sequence beyond it is issued: the next
 * process on a new boot continues after the reservation, a forward jump of at most
 * `RESERVATION_BLOCK`, so no number is ever issued twice.
 *
 * Layout of the directory: `lock` (the pid of the process using it), `streams` (one JSON string
 * per line: the stream name of slot n is line n), `sequences` (a header line with the boot it was
 * written in, then one fixed-width slot per stream: issued and reserved, 20 digits each).
 */
export interface SequenceJournal {
  /** What earlier processes issued, by stream name: the next process continues after it. */
  readonly restored: ReadonlyMap<string, number>;
  /** True when the previous writer ran in another boot of the machine (the reservations were used). */
  readonly afterMachineRestart: boolean;
  /** Records that `sequence` was issued for `streamName`, before anyone hears of it. */
  issued(streamName: string, sequence: number): void;
  /** Flushes everything to the disk and releases the directory. Idempotent. */
  close(): void;
}

/** Sequences reserved ahead, durable before use; half of it left triggers the next reservation. */
export const RESERVATION_BLOCK = 1024;

const HEADER_BYTES = 96;
const SLOT_BYTES = 48;
const DIGITS = 20;
const RESERVED_OFFSET = DIGITS + 1;
const MAGIC = 'aviso-ts sequences 1';

/** A directory that cannot hold the journal: startup refuses it with this message. */
export class SequenceJournalError extends Error {
  constructor(directory: string, problem: string) {
    super(`notification_backend.in_memory.state_directory "${directory}" ${problem}`);
    this.name = 'SequenceJournalError';
  }
}

interface Slot {
  readonly index: number;
  /** The reservation written to the file. */
  reserved: number;
  /** The reservation known to be on the disk. */
  durable: number;
}

export function openSequenceJournal(directory: string): SequenceJournal {
  const dir = resolve(directory);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw new SequenceJournalError(directory, `cannot be created: ${codeOf(error)}`);
  }
  const lock = takeLock(dir, directory);
  try {
    return FileSequenceJournal.open(dir, directory, lock);
  } catch (error) {
    releaseLock(lock);
    throw error instanceof SequenceJournalError ? error : new SequenceJournalError(directory, `cannot be written: ${codeOf(error)}`);
  }
}

class FileSequenceJournal implements SequenceJournal {
  private readonly slots = new Map<string, Slot>();
  private readonly digits = Buffer.alloc(DIGITS);
  private syncing = false;
  private closed = false;

  private constructor(
    private readonly sequencesFd: number,
    private readonly streamsFd: number,
    private readonly lockPath: string,
    readonly restored: ReadonlyMap<string, number>,
    readonly afterMachineRestart: boolean,
    /** Lines the streams file holds: the index of the next slot. */
    private lines: number,
  ) {}

  static open(dir: string, shown: string, lockPath: string): FileSequenceJournal {
    const sequencesPath = join(dir, 'sequences');
    const streamsPath = join(dir, 'streams');
    const previous = readPrevious(sequencesPath, streamsPath, shown);
    const boot = currentBootIdentity();
    const afterMachineRestart = previous.boot !== undefined && !isSameBoot(previous.boot, boot);
    const restored = new Map<string, number>();
    for (const { stream, issued, reserved } of previous.streams) {
      restored.set(stream, Math.max(restored.get(stream) ?? 0, afterMachineRestart ? Math.max(issued, reserved) : issued));
    }
    const sequencesFd = openSync(sequencesPath, previous.boot === undefined ? 'w+' : 'r+');
    // Appended to, never rewritten: a slot keeps its line's index for good.
    const streamsFd = openSync(streamsPath, 'a');
    if (previous.partialLine) writeSync(streamsFd, '\n');
    const lines = previous.lines + (previous.partialLine ? 1 : 0);
    const journal = new FileSequenceJournal(sequencesFd, streamsFd, lockPath, restored, afterMachineRestart, lines);
    // Slots first, the header (this boot) last: a process killed in between leaves the previous
    // boot's header, whose reading takes the reservations, which is safe either way.
    for (const { stream, index } of previous.streams) {
      const last = restored.get(stream) ?? 0;
      journal.slots.set(stream, { index, reserved: last + RESERVATION_BLOCK, durable: 0 });
      journal.writeSlot(index, last, last + RESERVATION_BLOCK);
    }
    fsyncSync(sequencesFd);
    journal.writeHeader(boot);
    fsyncSync(sequencesFd);
    for (const slot of journal.slots.values()) slot.durable = slot.reserved;
    return journal;
  }

  issued(streamName: string, sequence: number): void {
    if (this.closed) return;
    const slot = this.slots.get(streamName) ?? this.register(streamName);
    this.writeNumber(slot, 0, sequence);
    if (sequence + RESERVATION_BLOCK / 2 > slot.reserved) {
      slot.reserved = sequence + RESERVATION_BLOCK;
      this.writeNumber(slot, RESERVED_OFFSET, slot.reserved);
      this.syncSoon();
    }
    // The background flush fell behind (or the base is new): never issue past the disk's reservation.
    if (sequence > slot.durable) this.syncNow();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      fsyncSync(this.streamsFd);
      fsyncSync(this.sequencesFd);
    } finally {
      closeSync(this.streamsFd);
      closeSync(this.sequencesFd);
      releaseLock(this.lockPath);
    }
  }

  /** A stream's first sequence: its slot, then its name (a name without a slot reads as never issued). */
  private register(stream: string): Slot {
    const slot: Slot = { index: this.lines, reserved: RESERVATION_BLOCK, durable: 0 };
    this.writeSlot(slot.index, 0, slot.reserved);
    writeSync(this.streamsFd, `${JSON.stringify(stream)}\n`);
    this.lines++;
    this.slots.set(stream, slot);
    return slot;
  }

  private writeSlot(index: number, issued: number, reserved: number): void {
    const line = `${pad(issued)} ${pad(reserved)}`.padEnd(SLOT_BYTES - 1, ' ') + '\n';
    writeSync(this.sequencesFd, line, HEADER_BYTES + index * SLOT_BYTES);
  }

  private writeHeader(boot: string): void {
    const header = `${MAGIC} boot=${boot}`.slice(0, HEADER_BYTES - 1).padEnd(HEADER_BYTES - 1, ' ') + '\n';
    writeSync(this.sequencesFd, header, 0);
  }

  private writeNumber(slot: Slot, offset: number, value: number): void {
    this.digits.write(pad(value), 0, DIGITS, 'latin1');
    writeSync(this.sequencesFd, this.digits, 0, DIGITS, HEADER_BYTES + slot.index * SLOT_BYTES + offset);
  }

  /** Makes the written reservations durable in the background. */
  private syncSoon(): void {
    if (this.syncing || this.closed) return;
    this.syncing = true;
    const covered = [...this.slots.values()].map((slot) => [slot, slot.reserved] as const);
    fdatasync(this.streamsFd, (streamsError) => {
      if (this.closed) return;
      fdatasync(this.sequencesFd, (sequencesError) => {
        this.syncing = false;
        if (this.closed) return;
        if (!streamsError && !sequencesError) {
          for (const [slot, reserved] of covered) if (reserved > slot.durable) slot.durable = reserved;
        }
        if ([...this.slots.values()].some((slot) => slot.reserved > slot.durable)) this.syncSoon();
      });
    });
  }

  private syncNow(): void {
    fsyncSync(this.streamsFd);
    fsyncSync(this.sequencesFd);
    for (const slot of this.slots.values()) slot.durable = slot.reserved;
  }
}

interface PreviousSlot {
  readonly stream: string;
  readonly index: number;
  readonly issued: number;
  readonly reserved: number;
}

interface PreviousState {
  readonly boot: string | undefined;
  readonly streams: readonly PreviousSlot[];
  /** Complete lines of the streams file, readable or not. */
  readonly lines: number;
  /** The file ends in a line cut short, which the next name must not extend. */
  readonly partialLine?: boolean;
}

/** What the previous process left; a slot that cannot be read counts as never issued. */
function readPrevious(sequencesPath: string, streamsPath: string, shown: string): PreviousState {
  const sequences = readIfPresent(sequencesPath, shown);
  const streams = readIfPresent(streamsPath, shown);
  const fresh = sequences === undefined || sequences.length === 0;
  const header = fresh ? '' : sequences.subarray(0, HEADER_BYTES).toString('latin1');
  const boot = header.startsWith(`${MAGIC} boot=`) ? header.slice(MAGIC.length + 6).trim() : undefined;
  if (!fresh && boot === undefined) {
    throw new SequenceJournalError(shown, `holds a sequences file this version cannot read; move it away to start the numbering afresh`);
  }
  const text = streams?.toString('utf8') ?? '';
  // A last line without its newline was cut short: it names no slot, but keeps its index.
  const names = text.split('\n');
  const partial = names.pop() !== '';
  const found: PreviousSlot[] = [];
  names.forEach((line, index) => {
    let stream: unknown;
    try {
      stream = JSON.parse(line);
    } catch {
      return;
    }
    if (typeof stream !== 'string') return;
    if (fresh) return;
    const at = HEADER_BYTES + index * SLOT_BYTES;
    const slot = sequences.subarray(at, at + SLOT_BYTES).toString('latin1');
    const issued = readDigits(slot.slice(0, DIGITS));
    const reserved = readDigits(slot.slice(RESERVED_OFFSET, RESERVED_OFFSET + DIGITS));
    if (issued === undefined && reserved === undefined) return;
    found.push({ stream, index, issued: issued ?? 0, reserved: Math.max(reserved ?? 0, issued ?? 0) });
  });
  return { boot, streams: found, lines: names.length, partialLine: partial };
}

function readIfPresent(path: string, shown: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new SequenceJournalError(shown, `cannot be read: ${codeOf(error)}`);
  }
}

function readDigits(text: string): number | undefined {
  if (!/^\d{20}$/.test(text)) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
}

function pad(value: number): string {
  return String(value).padStart(DIGITS, '0');
}

/**
 * One process per directory: two writing the same slots would issue the same numbers. A lock left
 * by a process that no longer runs (killed, or this very process id after a container restart) is
 * taken over.
 */
function takeLock(dir: string, shown: string): string {
  const path = join(dir, 'lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, `${process.pid}\n`, { flag: 'wx' });
      return path;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new SequenceJournalError(shown, `cannot be written: ${codeOf(error)}`);
      }
    }
    const holder = Number.parseInt(readFileSync(path, 'utf8'), 10);
    if (Number.isSafeInteger(holder) && holder > 0 && holder !== process.pid && isRunning(holder)) {
      throw new SequenceJournalError(
        shown,
        `is in use by process ${holder}: each in-memory server needs its own state_directory (remove ${path} if that process is not an aviso-ts server)`,
      );
    }
    unlinkSync(path);
  }
  throw new SequenceJournalError(shown, 'could not be locked');
}

function releaseLock(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone: nothing to release.
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function codeOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const message = error instanceof Error ? error.message : String(error);
  return code ?? message;
}
