/**
 * The processes of one deployment asking each other a question and gathering the answers (D49):
 * the open streams of every process, or which of them holds a stream to close. On JetStream every
 * process is a client of the same NATS account, which carries the questions on core NATS
 * (jetstream/admin-exchange.ts); the in-memory backend runs one process and has no exchange.
 *
 * Bodies are text (the askers and answerers agree on JSON); the exchange only carries and gathers
 * them, within a bounded time, and says which processes it expected an answer from but got none.
 */

/** How long an asker waits for the answers of the other processes (1 s, docs/backends.md). */
export const ANSWER_BOUND_MS = 1_000;
/** How often each process says it is there. */
export const PRESENCE_INTERVAL_MS = 2_000;
/**
 * A process not heard of for this long is forgotten: three presence intervals, so one lost or
 * late announcement (a busy event loop) does not make a live process look gone.
 */
export const PRESENCE_WINDOW_MS = 3 * PRESENCE_INTERVAL_MS;

export interface DeploymentAnswer {
  /** The answering process's id (`<hostname>:<pid>`). */
  readonly process: string;
  readonly body: string;
}

export interface GatheredAnswers {
  /** At most one answer per process, in the order they arrived; never this process's own. */
  readonly answers: readonly DeploymentAnswer[];
  /** Processes seen within the presence window that did not answer within the bound. */
  readonly notAnswering: readonly string[];
  /**
   * The other processes could not be asked at all: the account may not use the exchange's
   * subjects, or the connection to NATS is down. `answers` is then empty.
   */
  readonly unreachable: boolean;
}

export interface AskOptions {
  /** True when this answer is all the asker needs (the process holding a stream): stop waiting. */
  readonly settles?: (answer: DeploymentAnswer) => boolean;
}

/** Answers a question of another process; `undefined` sends no answer. */
export type Responder = (body: string) => string | undefined;

export interface DeploymentExchange {
  /** This process's id, as the others know it. */
  readonly process: string;
  /** Registers the answer to a question (one responder per question; a later one replaces it). */
  answer(question: string, responder: Responder): void;
  /**
   * Asks every other process and gathers the answers that arrive within the bound. Never rejects;
   * resolves early once every process seen recently has answered, or one answer `settles` it.
   */
  ask(question: string, body: string, options?: AskOptions): Promise<GatheredAnswers>;
}
