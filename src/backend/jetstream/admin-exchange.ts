import { randomUUID } from 'node:crypto';
import { PermissionViolationError, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../../time/clock.js';
import {
  ANSWER_BOUND_MS,
  PRESENCE_INTERVAL_MS,
  PRESENCE_WINDOW_MS,
  type AskOptions,
  type DeploymentExchange,
  type GatheredAnswers,
  type Responder,
} from '../deployment-exchange.js';
import { AnswerGathering } from '../deployment/answer-gathering.js';
import { RecentPeers } from '../deployment/recent-peers.js';
import {
  ADMIN_PREFIX,
  AnswerAssembly,
  PRESENCE_SUBJECT,
  QUESTIONS_SUBJECT,
  answerParts,
  askNumberOf,
  partOf,
  presenceOf,
  questionOf,
  questionSubject,
  replySubject,
  repliesOf,
  senderHeaders,
  senderOf,
  type Presence,
} from './admin-messages.js';
import type { NatsLink } from './nats-link.js';
import { errorText } from './nats-errors.js';

export interface AdminExchangeOptions {
  /** This process's id (`<hostname>:<pid>`). */
  readonly process: string;
  readonly clock: Clock;
  /** The answers' bound; `ANSWER_BOUND_MS` unless a test asks otherwise. */
  readonly boundMs?: number;
  /** `PRESENCE_INTERVAL_MS` unless a test asks otherwise; the window is three intervals. */
  readonly presenceIntervalMs?: number;
}

interface PendingAsk {
  readonly gathering: AnswerGathering;
  readonly assembly: AnswerAssembly;
}

const utf8 = new TextDecoder('utf-8');

/**
 * The deployment exchange on core NATS (D49, admin-messages.ts for the subjects): every process
 * announces its presence, answers the questions of the others and gathers their answers within
 * the bound.
 *
 * Subscriptions follow the connection: the client renews them itself after a reconnect, the ones
 * a server refused are made again after a reconnect (the account may allow them by then), and a
 * fresh connection (the link made a new one after losing the old for good) gets a new set at the
 * next presence tick. An account that may not use `%AVISO_ADMIN.>` gets one warning; until the
 * next reconnect every question is answered by this process alone, marked unreachable.
 */
export class AdminExchange implements DeploymentExchange {
  readonly process: string;
  private readonly clock: Clock;
  private readonly boundMs: number;
  private readonly token = randomUUID().replaceAll('-', '');
  private readonly intervalMs: number;
  private readonly peers: RecentPeers;
  private readonly responders = new Map<string, Responder>();
  private readonly pending = new Map<number, PendingAsk>();
  private readonly startedAt: number;
  private readonly ticker: TimerHandle;
  private readonly unlisten: () => void;
  private connection: NatsConnection | undefined;
  private subscriptions: Subscription[] = [];
  private asks = 0;
  private denied = false;
  private deniedWarned = false;
  private stopped = false;

  constructor(
    private readonly link: NatsLink,
    private readonly logger: Logger,
    options: AdminExchangeOptions,
  ) {
    this.process = options.process;
    this.clock = options.clock;
    this.boundMs = options.boundMs ?? ANSWER_BOUND_MS;
    const intervalMs = options.presenceIntervalMs ?? PRESENCE_INTERVAL_MS;
    this.intervalMs = intervalMs;
    this.peers = new RecentPeers((PRESENCE_WINDOW_MS / PRESENCE_INTERVAL_MS) * intervalMs);
    this.startedAt = this.clock.now();
    link.onError((error) => this.onServerError(error));
    this.unlisten = link.onReconnected(() => this.onReconnected());
    this.ticker = this.clock.setInterval(() => this.tick(), intervalMs);
    this.follow('joining');
  }

  answer(question: string, responder: Responder): void {
    this.responders.set(question, responder);
  }

  async ask(question: string, body: string, options: AskOptions = {}): Promise<GatheredAnswers> {
    const now = this.clock.now();
    const number = ++this.asks;
    const gathering = new AnswerGathering(this.clock, {
      expected: this.peers.recent(now),
      boundMs: this.boundMs,
      // The peers answer this process's `joining` at once; one that missed it (a reconnect just
      // then) has announced itself within an interval.
      waitFullBound: now - this.startedAt < this.intervalMs,
      ...(options.settles ? { settles: options.settles } : {}),
    });
    this.pending.set(number, { gathering, assembly: new AnswerAssembly() });
    try {
      const nc = this.reachable();
      if (!nc) gathering.unreachable();
      else nc.publish(questionSubject(question), body, { reply: replySubject(this.token, number), headers: senderHeaders(this.process) });
    } catch {
      // No connection right now.
      gathering.unreachable();
    }
    try {
      return await gathering.result;
    } finally {
      this.pending.delete(number);
    }
  }

  /** Says it is leaving and unsubscribes; pending questions end as unreachable. Idempotent. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.ticker.cancel();
    this.unlisten();
    this.announce('leaving');
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    this.subscriptions = [];
    for (const { gathering } of this.pending.values()) gathering.unreachable();
  }

  /** The connection questions can go out on, or undefined while the cluster cannot be asked. */
  private reachable(): NatsConnection | undefined {
    if (this.denied || this.stopped) return undefined;
    const { nc } = this.link.clients();
    return nc === this.connection && this.subscriptions.every((subscription) => !subscription.isClosed()) ? nc : undefined;
  }

  private tick(): void {
    this.follow('here');
  }

  /**
   * Subscribes on the link's current connection when it is not the one subscribed on (the first
   * time, or a fresh connection after a loss), then announces `presence`.
   */
  private follow(presence: Presence): void {
    if (this.stopped) return;
    let nc: NatsConnection;
    try {
      nc = this.link.clients().nc;
    } catch {
      return; // No connection now: the next tick tries again.
    }
    if (nc !== this.connection) {
      this.subscribe(nc);
      presence = 'joining';
    }
    this.announce(presence);
  }

  private subscribe(nc: NatsConnection): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    this.connection = nc;
    const callback = (handle: (message: Msg) => void) => (error: Error | null, message: Msg) => {
      // An error closes the subscription: a refusal, which `onServerError` reports.
      if (!error) handle(message);
    };
    this.subscriptions = [
      nc.subscribe(PRESENCE_SUBJECT, { callback: callback((message) => this.onPresence(message)) }),
      nc.subscribe(QUESTIONS_SUBJECT, { callback: callback((message) => this.onQuestion(message)) }),
      nc.subscribe(repliesOf(this.token), { callback: callback((message) => this.onAnswer(message)) }),
    ];
  }

  private announce(presence: Presence): void {
    if (this.denied && presence !== 'leaving') return;
    try {
      this.connection?.publish(PRESENCE_SUBJECT, undefined, { headers: senderHeaders(this.process, presence) });
    } catch {
      // No connection: the others forget this process after the window, as they should.
    }
  }

  private onPresence(message: Msg): void {
    const sender = senderOf(message.headers);
    const presence = presenceOf(message.headers);
    if (sender === undefined || presence === undefined || sender === this.process) return;
    if (presence === 'leaving') {
      this.peers.left(sender);
      return;
    }
    this.peers.seen(sender, this.clock.now());
    // A process that just started learns of this one at once rather than at the next tick.
    if (presence === 'joining') this.announce('here');
  }

  private onQuestion(message: Msg): void {
    const sender = senderOf(message.headers);
    const question = questionOf(message.subject);
    if (sender === undefined || sender === this.process || question === undefined || !message.reply) return;
    this.peers.seen(sender, this.clock.now());
    const responder = this.responders.get(question);
    if (!responder) return;
    let body: string | undefined;
    try {
      body = responder(utf8.decode(message.data));
    } catch (error) {
      this.logger.warn(
        { event_name: 'backend.jetstream.admin.answer.failed', question, asked_by: sender, error: errorText(error) },
        'A question of another process could not be answered: it reports this process as not answering',
      );
      return;
    }
    if (body === undefined) return;
    try {
      const nc = this.link.clients().nc;
      for (const part of answerParts(this.process, body, nc.info?.max_payload))
        nc.publish(message.reply, part.data, { headers: part.headers });
    } catch {
      // No connection: the asker reports this process as not answering.
    }
  }

  private onAnswer(message: Msg): void {
    const sender = senderOf(message.headers);
    const part = partOf(message.headers);
    const number = askNumberOf(this.token, message.subject);
    if (sender === undefined || part === undefined || number === undefined) return;
    this.peers.seen(sender, this.clock.now());
    const pending = this.pending.get(number);
    if (!pending) return; // Arrived after the bound.
    const body = pending.assembly.add(sender, part, message.data);
    if (body !== undefined) pending.gathering.receive({ process: sender, body });
  }

  private onReconnected(): void {
    // Permissions may have changed since a refusal; subscriptions the server refused are made again.
    this.denied = false;
    if (this.connection && this.subscriptions.some((subscription) => subscription.isClosed())) this.connection = undefined;
    this.follow('joining');
  }

  /** Permission errors on `%AVISO_ADMIN.` subjects are ours: one warning, then this process alone answers. */
  private onServerError(error: Error): boolean {
    if (!(error instanceof PermissionViolationError) || !error.subject.startsWith(`${ADMIN_PREFIX}.`)) return false;
    if (this.stopped) return true;
    this.denied = true;
    for (const { gathering } of this.pending.values()) gathering.unreachable();
    const level = this.deniedWarned ? 'debug' : 'warn';
    this.deniedWarned = true;
    this.logger[level](
      { event_name: 'backend.jetstream.admin.denied', subject: error.subject, operation: error.operation, error: errorText(error) },
      `The NATS account may not use ${ADMIN_PREFIX}.>: the admin list and close of open streams reach this process only`,
    );
    return true;
  }
}
