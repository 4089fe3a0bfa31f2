/**
 * The targets of `fanout_capacity` (bench/README.md "Fan-out targets"), each a same-run ratio of
 * one side's figure to another's at one number of watchers: capacities (deliveries per second at
 * the capacity point) and server CPU per delivery in the first step at the start rate, which every
 * side measures under the same offered load. A ratio against a side that measured nothing (no
 * capacity, no deliveries) is NaN, `null` in results.json, and never meets its target.
 */

/** What a target reads of one side at one number of watchers. */
export interface SideFigures {
  /** At the capacity point; 0 when no rate held. */
  readonly deliveriesPerSecond: number;
  /** Server CPU per delivery in the first step at the start rate; NaN when nothing was delivered. */
  readonly cpuMicrosPerDelivery: number;
}

export interface PointFigures {
  readonly watchers: number;
  readonly sides: Readonly<Record<string, SideFigures>>;
}

export interface TargetCheck {
  /** The target in words, e.g. `aviso_memory CPU/delivery ≤ 1.3 × c_floor at 1000 watchers`. */
  readonly target: string;
  /** The ratio measured; NaN when the other side measured nothing. */
  readonly ratio: number;
  readonly limit: number;
  readonly met: boolean;
}

interface CapacityTarget {
  readonly kind: 'capacity';
  /** Which point: the first number of watchers or the last (the largest). */
  readonly at: 'first' | 'last';
  readonly against: string;
  /** The side's capacity must be at least this times the other's. */
  readonly atLeast: number;
}

interface CpuTarget {
  readonly kind: 'cpu';
  readonly against: string;
  /** At every point, the side's CPU per delivery must be at most this times the other's. */
  readonly atMost: number;
}

export type TargetRule = CapacityTarget | CpuTarget;

export const BARE = 'bare_node';
export const NCHAN = 'nchan';
export const C_FLOOR = 'c_floor';

/** Issue 21 (capacity at the first point against the bare server and Nchan) and issue 31 (the rest). */
export const FANOUT_CAPACITY_TARGETS: readonly TargetRule[] = [
  { kind: 'capacity', at: 'first', against: BARE, atLeast: 0.85 },
  { kind: 'capacity', at: 'first', against: NCHAN, atLeast: 0.7 },
  { kind: 'capacity', at: 'last', against: NCHAN, atLeast: 1.0 },
  { kind: 'cpu', against: NCHAN, atMost: 1.0 },
  { kind: 'cpu', against: C_FLOOR, atMost: 1.3 },
];

/** The targets as the table's `target` column shows them. */
export function describeTargets(targets: readonly TargetRule[]): string {
  return targets
    .map((target) =>
      target.kind === 'capacity'
        ? `capacity at ${target.at === 'first' ? 'first' : 'largest'} W ≥ ${target.atLeast} × ${target.against}`
        : `CPU/delivery ≤ ${target.atMost} × ${target.against}`,
    )
    .join(', ');
}

/** `value / baseline`, NaN when the baseline measured nothing (0 or NaN). */
export function sameRunRatio(value: number, baseline: number): number {
  return baseline > 0 ? value / baseline : Number.NaN;
}

/** Every target checked for `side`, in order; CPU targets once per point. */
export function checkTargets(side: string, points: readonly PointFigures[], targets: readonly TargetRule[]): TargetCheck[] {
  const figures = (point: PointFigures | undefined, name: string): SideFigures =>
    point?.sides[name] ?? { deliveriesPerSecond: 0, cpuMicrosPerDelivery: Number.NaN };
  const checks: TargetCheck[] = [];
  for (const target of targets) {
    if (target.kind === 'capacity') {
      const point = target.at === 'first' ? points[0] : points[points.length - 1];
      const ratio = sameRunRatio(figures(point, side).deliveriesPerSecond, figures(point, target.against).deliveriesPerSecond);
      checks.push({
        target: `${side} capacity ≥ ${target.atLeast} × ${target.against} at ${point?.watchers ?? '?'} watchers`,
        ratio,
        limit: target.atLeast,
        met: ratio >= target.atLeast,
      });
      continue;
    }
    for (const point of points) {
      const ratio = sameRunRatio(figures(point, side).cpuMicrosPerDelivery, figures(point, target.against).cpuMicrosPerDelivery);
      checks.push({
        target: `${side} CPU/delivery ≤ ${target.atMost} × ${target.against} at ${point.watchers} watchers`,
        ratio,
        limit: target.atMost,
        // NaN compares false: a target is never met against nothing.
        met: ratio <= target.atMost,
      });
    }
  }
  return checks;
}
