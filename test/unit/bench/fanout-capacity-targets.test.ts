import { describe, expect, it } from 'vitest';
import {
  checkTargets,
  FANOUT_CAPACITY_TARGETS,
  type PointFigures,
  type TargetRule,
} from '../../../bench/support/fanout-capacity-targets.js';

const side = (
  deliveriesPerSecond: number,
  cpuMicrosPerDelivery: number,
): { deliveriesPerSecond: number; cpuMicrosPerDelivery: number } => ({
  deliveriesPerSecond,
  cpuMicrosPerDelivery,
});

const POINTS: readonly PointFigures[] = [
  {
    watchers: 1_000,
    sides: { aviso_memory: side(30_000, 13), bare_node: side(35_000, 12), nchan: side(40_000, 10), c_floor: side(80_000, 10) },
  },
  {
    watchers: 10_000,
    sides: { aviso_memory: side(10_000, 12), bare_node: side(0, 12), nchan: side(10_000, 12.5), c_floor: side(20_000, 9) },
  },
];

describe('checkTargets', () => {
  it('checks capacity at the first or the largest W, and CPU per delivery at every W', () => {
    const checks = checkTargets('aviso_memory', POINTS, FANOUT_CAPACITY_TARGETS);
    expect(checks.map((check) => [check.target, Number(check.ratio.toFixed(3)), check.met])).toEqual([
      ['aviso_memory capacity ≥ 0.85 × bare_node at 1000 watchers', 0.857, true],
      ['aviso_memory capacity ≥ 0.7 × nchan at 1000 watchers', 0.75, true],
      ['aviso_memory capacity ≥ 1 × nchan at 10000 watchers', 1, true],
      ['aviso_memory CPU/delivery ≤ 1 × nchan at 1000 watchers', 1.3, false],
      ['aviso_memory CPU/delivery ≤ 1 × nchan at 10000 watchers', 0.96, true],
      ['aviso_memory CPU/delivery ≤ 1.3 × c_floor at 1000 watchers', 1.3, true],
      ['aviso_memory CPU/delivery ≤ 1.3 × c_floor at 10000 watchers', 1.333, false],
    ]);
  });

  it('never meets a target against a side that measured nothing', () => {
    const capacityVsBareAtLargest: TargetRule = { kind: 'capacity', at: 'last', against: 'bare_node', atLeast: 0.5 };
    const cpuVsMissing: TargetRule = { kind: 'cpu', against: 'missing', atMost: 100 };
    const checks = checkTargets('aviso_memory', POINTS, [capacityVsBareAtLargest, cpuVsMissing]);
    expect(checks.map((check) => [Number.isNaN(check.ratio), check.met])).toEqual([
      [true, false],
      [true, false],
      [true, false],
    ]);
  });
});
