/**
 * The rate search of a capacity measurement: the offered rate doubles from `startRate` until a
 * step fails (or `maxRate` would be passed), then the gap between the last rate that held and the
 * first that did not is halved `bisections` times. A rate fails only when it failed `retries` + 1
 * times in a row: on a shared machine a neighbour's burst can spoil one step. The capacity is the
 * highest rate that held; every step measured is kept, in order. A rate that fails at the start
 * leaves no capacity: going lower would not help when one notification's fan-out alone breaks the
 * latency bound.
 */

export interface CapacityStep {
  readonly rate: number;
  readonly pass: boolean;
}

export interface CapacitySearchOptions {
  readonly startRate: number;
  readonly maxRate: number;
  readonly bisections: number;
  readonly retries: number;
}

export interface CapacityResult<Step extends CapacityStep> {
  readonly steps: readonly Step[];
  /** The step at the highest rate that held, if any did. */
  readonly capacity: Step | undefined;
  /** The lowest rate that failed above the capacity (undefined when `maxRate` held). */
  readonly firstFailure: Step | undefined;
}

/** Three significant digits, so bisected rates stay readable. */
function readableRate(rate: number): number {
  return Number(rate.toPrecision(3));
}

export async function searchCapacity<Step extends CapacityStep>(
  options: CapacitySearchOptions,
  measure: (rate: number) => Promise<Step>,
): Promise<CapacityResult<Step>> {
  const steps: Step[] = [];
  const attempt = async (rate: number): Promise<Step> => {
    let step = await measure(rate);
    steps.push(step);
    for (let retry = 0; retry < options.retries && !step.pass; retry++) {
      step = await measure(rate);
      steps.push(step);
    }
    return step;
  };
  let held: Step | undefined;
  let failed: Step | undefined;
  for (let rate = options.startRate; rate <= options.maxRate; rate *= 2) {
    const step = await attempt(rate);
    if (!step.pass) {
      failed = step;
      break;
    }
    held = step;
  }
  if (held === undefined) return { steps, capacity: undefined, firstFailure: failed };
  for (let i = 0; i < options.bisections && failed !== undefined; i++) {
    const rate = readableRate((held.rate + failed.rate) / 2);
    if (rate <= held.rate || rate >= failed.rate) break;
    const step = await attempt(rate);
    if (step.pass) held = step;
    else failed = step;
  }
  return { steps, capacity: held, firstFailure: failed };
}
