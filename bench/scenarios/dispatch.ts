import type { LiveSink, StoredNotification } from '../../src/backend/backend.js';
import { LiveDispatch } from '../../src/backend/live-dispatch.js';
import type { SchemaRegistry } from '../../src/schema/schema-registry.js';
import { StoredIdentityReader } from '../../src/schema/stored-identifier.js';
import { TopicDecodeError, decodeTopic } from '../../src/topic/percent-codec.js';
import type { TopicPattern } from '../../src/topic/topic-pattern.js';
import type { Scenario, ScenarioContext } from '../support/scenario.js';
import { median, round } from '../support/stats.js';
import { seededRandom } from '../support/seeded-random.js';
import { compiledWatch, configSchemaRegistry, storedTemplates, type CompiledWatch } from '../support/stored-layout.js';

/**
 * Live dispatch in this process, no sockets: W watches of distinct mars topics (every field of
 * the key_order given, so each pattern is one topic), registered in a `LiveDispatch` as both
 * backends register them, each sink running its watch's precise predicate (`compileWatchFilter`,
 * one shared `StoredIdentityReader`, as a stream session does) and counting what it accepts. M
 * notifications shaped as notify stores them, each to a random one of the W topics (so each
 * matches exactly one watch), are dispatched one by one, a slice of them per round; fresh objects
 * every round, so the per-notification caches are filled inside the timed loop. The three sizes
 * take turns in every round. Value: ns per notification at the largest W, the median of the
 * rounds; baseline: the same at the smallest W; ratio = value / baseline (issue 14: ≤ 2).
 *
 * Beside it, on the same watches and notifications: `index_only_ns_at_<W>`, the same dispatch to
 * sinks that only count (the index's own cost, predicates left out), and `linear_ns_at_<W>`, the
 * dispatch before issue 14 (every registration visited, its pattern tested against the decoded
 * topic) with fewer notifications per round at large W so a round stays short.
 */
const SIZES = {
  full: { watches: [100, 10_000, 100_000], notifications: 5_000, perRound: 1_000, rounds: 35 },
  quick: { watches: [100, 10_000, 100_000], notifications: 1_000, perRound: 500, rounds: 10 },
};
const WARMUP_ROUNDS = 3;
const TARGET_RATIO = 2;
/** Registrations a linear round may visit in all (notifications × W), to bound its time. */
const LINEAR_VISITS_PER_ROUND = 2_000_000;

/** The k-th distinct mars topic: a date per 1,000 watches, a step within it. */
function marsIdentifier(k: number): Record<string, string> {
  const day = new Date(Date.UTC(2025, 0, 1) + Math.floor(k / 1000) * 86_400_000).toISOString().slice(0, 10);
  return { class: 'od', expver: '0001', domain: 'g', date: day, time: '12:00', stream: 'enfo', step: String(k % 1000) };
}

/** What the two dispatch paths offer: register a sink, hand a notification to the matching ones. */
interface Dispatcher {
  register(pattern: TopicPattern, sink: LiveSink): () => boolean;
  dispatch(notification: StoredNotification): void;
}

/** The live dispatch of both backends before issue 14, for the before/after numbers. */
class LinearScan implements Dispatcher {
  private readonly registrations = new Set<{ pattern: TopicPattern; sink: LiveSink }>();

  register(pattern: TopicPattern, sink: LiveSink): () => boolean {
    const registration = { pattern, sink };
    this.registrations.add(registration);
    return () => this.registrations.delete(registration);
  }

  dispatch(notification: StoredNotification): void {
    let tokens: string[];
    try {
      tokens = decodeTopic(notification.topic);
    } catch (error) {
      if (error instanceof TopicDecodeError) return;
      throw error;
    }
    for (const { pattern, sink } of this.registrations) {
      if (pattern.matchesTokens(tokens)) sink.deliver(notification);
    }
  }
}

function buildWatches(schemas: SchemaRegistry, identities: StoredIdentityReader, count: number): CompiledWatch[] {
  return Array.from({ length: count }, (_, k) =>
    compiledWatch(schemas, identities, JSON.stringify({ event_type: 'mars', identifier: marsIdentifier(k) })),
  );
}

/** What notify stores for M notifications to random watched topics; sequences from 1. */
function marsTemplates(schemas: SchemaRegistry, watches: number, count: number): Omit<StoredNotification, 'sequence'>[] {
  const random = seededRandom(watches);
  return storedTemplates(
    schemas,
    (index) =>
      JSON.stringify({
        event_type: 'mars',
        identifier: marsIdentifier(Math.floor(random() * watches)),
        payload: { location: `/data/${index}.grib` },
      }),
    count,
  );
}

interface Registered {
  readonly dispatcher: Dispatcher;
  readonly removers: (() => boolean)[];
  /** Deliveries the sinks received and predicates that accepted, since the last reset. */
  readonly counts: { delivered: number; accepted: number };
  readonly registerNs: number;
}

/** `predicates: false` registers sinks that only count, to show the index's own cost. */
function register(dispatcher: Dispatcher, watches: readonly CompiledWatch[], predicates: boolean): Registered {
  const counts = { delivered: 0, accepted: 0 };
  const started = process.hrtime.bigint();
  const removers = watches.map(({ pattern, predicate }) =>
    dispatcher.register(pattern, {
      deliver: predicates
        ? (notification) => {
            counts.delivered++;
            if (predicate(notification)) counts.accepted++;
          }
        : () => {
            counts.delivered++;
            counts.accepted++;
          },
      end: () => undefined,
    }),
  );
  const registerNs = Number(process.hrtime.bigint() - started) / watches.length;
  return { dispatcher, removers, counts, registerNs };
}

/** ns per notification of one round over fresh notifications; problems when a count is off. */
function timeRound(
  registered: Registered,
  templates: readonly Omit<StoredNotification, 'sequence'>[],
  label: string,
  problems: string[],
): number {
  const notifications = templates.map((template, index) => ({ sequence: index + 1, ...template }));
  registered.counts.delivered = 0;
  registered.counts.accepted = 0;
  const started = process.hrtime.bigint();
  for (const notification of notifications) registered.dispatcher.dispatch(notification);
  const ns = Number(process.hrtime.bigint() - started) / notifications.length;
  const { delivered, accepted } = registered.counts;
  if (delivered !== notifications.length || accepted !== notifications.length) {
    problems.push(`${label}: ${notifications.length} notifications reached ${delivered} watchers, ${accepted} accepted (1 each expected)`);
  }
  return ns;
}

/** One watch count: its watches registered three ways, and the round times of each. */
interface Setup {
  readonly watches: number;
  readonly templates: readonly Omit<StoredNotification, 'sequence'>[];
  readonly linearTemplates: readonly Omit<StoredNotification, 'sequence'>[];
  readonly indexed: Registered;
  readonly bare: Registered;
  readonly linear: Registered;
  readonly rounds: { indexed: number[]; bare: number[]; linear: number[] };
}

function setUp(schemas: SchemaRegistry, watchCount: number, notifications: number, perRound: number): Setup {
  const identities = new StoredIdentityReader(schemas);
  const watches = buildWatches(schemas, identities, watchCount);
  const templates = marsTemplates(schemas, watchCount, notifications);
  const linearCount = Math.max(20, Math.min(perRound, Math.floor(LINEAR_VISITS_PER_ROUND / watchCount)));
  return {
    watches: watchCount,
    templates,
    linearTemplates: templates.slice(0, linearCount),
    indexed: register(new LiveDispatch(), watches, true),
    bare: register(new LiveDispatch(), watches, false),
    linear: register(new LinearScan(), watches, true),
    rounds: { indexed: [], bare: [], linear: [] },
  };
}

function removeAll(registered: Registered): number {
  const started = process.hrtime.bigint();
  let removed = 0;
  for (const remove of registered.removers) if (remove()) removed++;
  const ns = Number(process.hrtime.bigint() - started) / registered.removers.length;
  return removed === registered.removers.length ? ns : Number.NaN;
}

export const dispatch: Scenario = {
  name: 'dispatch',
  target: `ratio ≤ ${TARGET_RATIO.toFixed(2)}`,
  async run(context: ScenarioContext) {
    const size = context.quick ? SIZES.quick : SIZES.full;
    const schemas = configSchemaRegistry();
    const problems: string[] = [];
    const setups = size.watches.map((watchCount) => setUp(schemas, watchCount, size.notifications, size.perRound));
    // Many short rounds in which the sizes take turns, so a change in the machine's load (other
    // processes share its cores) reaches all of them alike.
    for (let round = 0; round < WARMUP_ROUNDS + size.rounds; round++) {
      const from = (round * size.perRound) % size.notifications;
      for (const setup of setups) {
        const at = `at ${setup.watches}`;
        const slice = setup.templates.slice(from, from + size.perRound);
        const indexedNs = timeRound(setup.indexed, slice, `indexed ${at}`, problems);
        const bareNs = timeRound(setup.bare, slice, `indexed without predicates ${at}`, problems);
        const linearNs = timeRound(setup.linear, setup.linearTemplates, `linear ${at}`, problems);
        if (round < WARMUP_ROUNDS) continue;
        setup.rounds.indexed.push(indexedNs);
        setup.rounds.bare.push(bareNs);
        setup.rounds.linear.push(linearNs);
      }
    }
    const extra: Record<string, unknown> = { notifications: size.notifications, per_round: size.perRound, rounds: size.rounds };
    for (const setup of setups) {
      const w = setup.watches;
      extra[`indexed_ns_at_${w}`] = round(median(setup.rounds.indexed));
      extra[`indexed_range_ns_at_${w}`] = [round(Math.min(...setup.rounds.indexed)), round(Math.max(...setup.rounds.indexed))];
      extra[`index_only_ns_at_${w}`] = round(median(setup.rounds.bare));
      extra[`linear_ns_at_${w}`] = round(median(setup.rounds.linear));
      extra[`linear_notifications_at_${w}`] = setup.linearTemplates.length;
      extra[`register_ns_per_watch_at_${w}`] = round(setup.indexed.registerNs);
      const removeNs = removeAll(setup.indexed);
      if (Number.isNaN(removeNs)) problems.push(`indexed at ${w}: a watch could not be removed once`);
      extra[`remove_ns_per_watch_at_${w}`] = round(removeNs);
      removeAll(setup.bare);
      removeAll(setup.linear);
    }
    const first = setups[0] as Setup;
    const last = setups.at(-1) as Setup;
    const value = median(last.rounds.indexed);
    const baseline = median(first.rounds.indexed);
    const ratioOf = (rounds: (s: Setup) => number[]) => median(rounds(last)) / median(rounds(first));
    extra.index_only_ratio = round(
      ratioOf((s) => s.rounds.bare),
      3,
    );
    // The fastest rounds are the least disturbed by other processes: a second view of the ratio.
    extra.ratio_of_fastest_rounds = round(Math.min(...last.rounds.indexed) / Math.min(...first.rounds.indexed), 3);
    extra.linear_ratio = round(
      ratioOf((s) => s.rounds.linear),
      3,
    );
    const show = (ns: number) => (ns >= 10_000 ? `${round(ns / 1000, 3)} µs` : `${Math.round(ns)} ns`);
    const series = (rounds: (s: Setup) => number[]) => setups.map((s) => show(median(rounds(s)))).join('/');
    return {
      value: round(value),
      unit: 'ns/notification',
      baseline: round(baseline),
      ratio: round(value / baseline, 3),
      pass: value / baseline <= TARGET_RATIO,
      problems: [...new Set(problems)],
      summary:
        `watches ${size.watches.map((w) => w.toLocaleString('en-US')).join('/')}: ${series((s) => s.rounds.indexed)}; ` +
        `index alone ${series((s) => s.rounds.bare)}; linear scan (before) ${series((s) => s.rounds.linear)} (ratio ${round(
          ratioOf((s) => s.rounds.linear),
          3,
        )})`,
      extra,
    };
  },
};
