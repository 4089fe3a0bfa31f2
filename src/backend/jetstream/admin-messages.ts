import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';

/**
 * The core NATS messages of the deployment exchange (D49, docs/backends.md "Open streams across
 * processes"). Every subject starts with `%AVISO_ADMIN`, which no stream aviso-ts creates can
 * capture for the reason `%AVISO_LIVE` cannot be (live-announcement.ts): `%AV` is no escape of a
 * topic, so no event type's stream subjects ever match it. The account must allow publishing and
 * subscribing on `%AVISO_ADMIN.>`.
 *
 * - `%AVISO_ADMIN.presence`: each process says it is there (`here`, every 2 s), that it just
 *   started (`joining`, answered at once by the others' `here`) or that it stops (`leaving`).
 * - `%AVISO_ADMIN.ask.<question>`: a question to every process; its reply subject is under the
 *   asker's own `%AVISO_ADMIN.reply.<token>.`, so answers never leave the prefix.
 * - An answer larger than one NATS message (`max_payload`) is sent in parts, in order.
 */
export const ADMIN_PREFIX = '%AVISO_ADMIN';
export const PRESENCE_SUBJECT = `${ADMIN_PREFIX}.presence`;
export const QUESTIONS_SUBJECT = `${ADMIN_PREFIX}.ask.>`;
const QUESTION_PREFIX = `${ADMIN_PREFIX}.ask.`;

const PROCESS_HEADER = 'Aviso-Admin-Process';
const PRESENCE_HEADER = 'Aviso-Admin-Presence';
const PART_HEADER = 'Aviso-Admin-Part';

/** Room left in a message for the headers and the protocol line around an answer's part. */
const PART_OVERHEAD_BYTES = 4_096;
/** nats-server's default `max_payload`, for a server that did not say. */
const DEFAULT_MAX_PAYLOAD = 1_048_576;

export type Presence = 'here' | 'joining' | 'leaving';

export function questionSubject(question: string): string {
  return `${QUESTION_PREFIX}${question}`;
}

/** The question of a subject under `%AVISO_ADMIN.ask.`, else undefined. */
export function questionOf(subject: string): string | undefined {
  return subject.startsWith(QUESTION_PREFIX) ? subject.slice(QUESTION_PREFIX.length) : undefined;
}

export function repliesOf(token: string): string {
  return `${ADMIN_PREFIX}.reply.${token}.>`;
}

export function replySubject(token: string, askNumber: number): string {
  return `${ADMIN_PREFIX}.reply.${token}.${askNumber}`;
}

/** The ask number of a reply subject of this token, else undefined. */
export function askNumberOf(token: string, subject: string): number | undefined {
  const prefix = `${ADMIN_PREFIX}.reply.${token}.`;
  if (!subject.startsWith(prefix)) return undefined;
  const number = Number(subject.slice(prefix.length));
  return Number.isSafeInteger(number) ? number : undefined;
}

export function senderHeaders(process: string, presence?: Presence): MsgHdrs {
  const headers = natsHeaders();
  headers.set(PROCESS_HEADER, process);
  if (presence) headers.set(PRESENCE_HEADER, presence);
  return headers;
}

export function senderOf(headers: MsgHdrs | undefined): string | undefined {
  const process = headers?.get(PROCESS_HEADER);
  return process ? process : undefined;
}

export function presenceOf(headers: MsgHdrs | undefined): Presence | undefined {
  const presence = headers?.get(PRESENCE_HEADER);
  return presence === 'here' || presence === 'joining' || presence === 'leaving' ? presence : undefined;
}

export interface AnswerPart {
  readonly headers: MsgHdrs;
  readonly data: Uint8Array;
}

/** An answer cut into parts that each fit a message of the connected server. */
export function answerParts(process: string, body: string, maxPayload: number | undefined): AnswerPart[] {
  const bytes = new TextEncoder().encode(body);
  const size = Math.max(1_024, (maxPayload ?? DEFAULT_MAX_PAYLOAD) - PART_OVERHEAD_BYTES);
  const count = Math.max(1, Math.ceil(bytes.length / size));
  const parts: AnswerPart[] = [];
  for (let index = 0; index < count; index++) {
    const headers = senderHeaders(process);
    headers.set(PART_HEADER, `${index + 1}/${count}`);
    parts.push({ headers, data: bytes.subarray(index * size, (index + 1) * size) });
  }
  return parts;
}

/** `[index, count]` (1-based) of an answer's part, else undefined. */
export function partOf(headers: MsgHdrs | undefined): [number, number] | undefined {
  const match = /^(\d+)\/(\d+)$/.exec(headers?.get(PART_HEADER) ?? '');
  if (!match) return undefined;
  const index = Number(match[1]);
  const count = Number(match[2]);
  return index >= 1 && index <= count && count <= 100_000 ? [index, count] : undefined;
}

/**
 * Puts the parts of each process's answer to one question back together: the whole answer once
 * its last missing part arrives, else undefined.
 */
export class AnswerAssembly {
  private readonly partial = new Map<string, { readonly parts: (Uint8Array | undefined)[]; missing: number }>();

  add(process: string, [index, count]: [number, number], data: Uint8Array): string | undefined {
    let entry = this.partial.get(process);
    if (!entry || entry.parts.length !== count) {
      entry = { parts: new Array<Uint8Array | undefined>(count).fill(undefined), missing: count };
      this.partial.set(process, entry);
    }
    if (entry.parts[index - 1] === undefined) {
      // Copied: the client may reuse the buffer a message was read into.
      entry.parts[index - 1] = data.slice();
      entry.missing--;
    }
    if (entry.missing > 0) return undefined;
    this.partial.delete(process);
    return Buffer.concat(entry.parts as Uint8Array[]).toString('utf8');
  }
}
