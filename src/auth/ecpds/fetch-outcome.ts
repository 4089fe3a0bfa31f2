/**
 * Outcomes of one ECPDS fetch and how several servers' answers combine into one
 * (docs/design/rules/operations.md §2.10.3–§2.10.5). Pure: no I/O, no logging.
 */

/** Metric labels of `aviso_ecpds_fetch_total`, in the order the rules list them (the series are created in this order). */
export const FETCH_OUTCOMES = ['success', 'http_401', 'http_403', 'http_4xx', 'http_5xx', 'invalid_response', 'unreachable'] as const;

export type FetchOutcome = (typeof FETCH_OUTCOMES)[number];
export type FailureOutcome = Exclude<FetchOutcome, 'success'>;

export type PartialOutagePolicy = 'strict' | 'any_success';

/** What one server answered. */
export type ServerAnswer =
  | { readonly outcome: 'success'; readonly destinations: ReadonlySet<string> }
  | { readonly outcome: FailureOutcome; readonly error: string };

/**
 * The merged result of one fetch. A usable fetch carries the union of the successful servers'
 * sets; its `outcome` is the metric label, which under `any_success` may name a failure even
 * though the fetch is usable (a degraded-but-serving fetch stays visible in metrics).
 */
export type DestinationFetch =
  | { readonly ok: true; readonly outcome: FetchOutcome; readonly destinations: ReadonlySet<string> }
  | { readonly ok: false; readonly outcome: FailureOutcome };

/**
 * Higher is worse: the label of a fetch that several servers failed is the worst one. Credential
 * problems outrank everything because they are the ones an operator must fix; a plain outage ranks lowest because it usually fixes itself.
 */
const SEVERITY: Readonly<Record<FetchOutcome, number>> = {
  success: 0,
  unreachable: 1,
  http_5xx: 2,
  invalid_response: 3,
  http_4xx: 4,
  http_403: 5,
  http_401: 6,
};

/** The worst of the given outcomes, or `undefined` for none. */
export function worstOutcome<T extends FetchOutcome>(outcomes: Iterable<T>): T | undefined {
  let worst: T | undefined;
  for (const outcome of outcomes) {
    if (worst === undefined || SEVERITY[outcome] > SEVERITY[worst]) worst = outcome;
  }
  return worst;
}

/**
 * The destinations are the union of what the successful servers returned. `strict` succeeds only
 * when every server did; `any_success` when one did, labelled with the worst failure so that a
 * degraded service shows in the metrics. A failed fetch carries the worst label.
 */
export function mergeServerAnswers(answers: readonly ServerAnswer[], policy: PartialOutagePolicy): DestinationFetch {
  const destinations = new Set<string>();
  const failures: FailureOutcome[] = [];
  for (const answer of answers) {
    if (answer.outcome === 'success') for (const name of answer.destinations) destinations.add(name);
    else failures.push(answer.outcome);
  }
  const worstFailure = worstOutcome(failures);
  if (worstFailure === undefined) return { ok: true, outcome: 'success', destinations };
  const anySucceeded = failures.length < answers.length;
  if (policy === 'any_success' && anySucceeded) return { ok: true, outcome: worstFailure, destinations };
  return { ok: false, outcome: worstFailure };
}

/** The reference's error-kind names, used as `fetch_outcome` in `auth.ecpds.check.unavailable` (docs/design/rules/operations.md §2.10.7). */
const LOG_NAMES: Readonly<Record<FailureOutcome, string>> = {
  http_401: 'Unauthorized',
  http_403: 'Forbidden',
  http_4xx: 'ClientError',
  http_5xx: 'ServerError',
  invalid_response: 'InvalidResponse',
  unreachable: 'Unreachable',
};

export function failureLogName(outcome: FailureOutcome): string {
  return LOG_NAMES[outcome];
}

/** The label of a non-2xx final status: 401 and 403 have their own, other 4xx and 5xx one each. */
export function statusOutcome(status: number): FailureOutcome {
  if (status === 401) return 'http_401';
  if (status === 403) return 'http_403';
  if (status >= 400 && status <= 499) return 'http_4xx';
  return 'http_5xx';
}
