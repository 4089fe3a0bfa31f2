/** What every scenario module exports and returns. */

export interface ScenarioContext {
  readonly quick: boolean;
}

export interface Measurement {
  readonly value: number;
  readonly unit: string;
  /** The same-run baseline, in the same unit. */
  readonly baseline: number;
  /** value / baseline. */
  readonly ratio: number;
  /** Whether the target holds. */
  readonly pass: boolean;
  /**
   * Correctness problems seen while measuring (non-2xx answers, lost or duplicate events, error
   * frames). Any problem fails the run, whatever the numbers.
   */
  readonly problems: readonly string[];
  /** The few numbers behind the verdict, for the table's last column. */
  readonly summary: string;
  /** Scenario-specific numbers (latency percentiles, sizes, counts) written to results.json. */
  readonly extra: Readonly<Record<string, unknown>>;
}

export interface Scenario {
  readonly name: string;
  /** The target as the table shows it. */
  readonly target: string;
  run(context: ScenarioContext): Promise<Measurement>;
}
