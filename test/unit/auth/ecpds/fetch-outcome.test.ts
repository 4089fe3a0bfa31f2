import { describe, expect, it } from 'vitest';
import {
  failureLogName,
  mergeServerAnswers,
  statusOutcome,
  worstOutcome,
  type FetchOutcome,
  type ServerAnswer,
} from '../../../../src/auth/ecpds/fetch-outcome.js';

/** docs/design/rules/operations.md §2.10.4, highest first. */
const RANKING: readonly FetchOutcome[] = ['http_401', 'http_403', 'http_4xx', 'invalid_response', 'http_5xx', 'unreachable', 'success'];

const ok = (...names: string[]): ServerAnswer => ({ outcome: 'success', destinations: new Set(names) });
const failed = (outcome: Exclude<FetchOutcome, 'success'>): ServerAnswer => ({ outcome, error: 'x' });

describe('worstOutcome', () => {
  it('follows the ranking 401 > 403 > 4xx > invalid_response > 5xx > unreachable > success', () => {
    RANKING.forEach((higher, index) => {
      for (const lower of RANKING.slice(index + 1)) {
        expect(worstOutcome([lower, higher])).toBe(higher);
        expect(worstOutcome([higher, lower])).toBe(higher);
      }
    });
  });

  it('is undefined for no outcomes', () => {
    expect(worstOutcome([])).toBeUndefined();
  });
});

describe('mergeServerAnswers', () => {
  it('succeeds under strict with the union when every server succeeded', () => {
    const merged = mergeServerAnswers([ok('CIP'), ok('FOO', 'CIP')], 'strict');
    expect(merged).toEqual({ ok: true, outcome: 'success', destinations: new Set(['CIP', 'FOO']) });
  });

  it('fails under strict with the worst failure when any server failed', () => {
    expect(mergeServerAnswers([ok('CIP'), failed('unreachable'), failed('http_403')], 'strict')).toEqual({
      ok: false,
      outcome: 'http_403',
    });
  });

  it('serves the union of the successful servers under any_success, labelled with the worst failure', () => {
    const merged = mergeServerAnswers([failed('http_5xx'), ok('CIP'), ok('FOO'), failed('unreachable')], 'any_success');
    expect(merged).toEqual({ ok: true, outcome: 'http_5xx', destinations: new Set(['CIP', 'FOO']) });
  });

  it('labels an any_success fetch where nothing failed as success', () => {
    expect(mergeServerAnswers([ok('CIP'), ok()], 'any_success')).toEqual({
      ok: true,
      outcome: 'success',
      destinations: new Set(['CIP']),
    });
  });

  it('fails under any_success with the worst label when every server failed', () => {
    expect(mergeServerAnswers([failed('http_5xx'), failed('http_401')], 'any_success')).toEqual({
      ok: false,
      outcome: 'http_401',
    });
  });

  it('treats an empty list as a valid answer that denies everything', () => {
    expect(mergeServerAnswers([ok()], 'strict')).toEqual({ ok: true, outcome: 'success', destinations: new Set() });
  });
});

describe('statusOutcome', () => {
  it.each([
    [401, 'http_401'],
    [403, 'http_403'],
    [400, 'http_4xx'],
    [404, 'http_4xx'],
    [429, 'http_4xx'],
    [500, 'http_5xx'],
    [503, 'http_5xx'],
    [302, 'http_5xx'],
    [304, 'http_5xx'],
    [101, 'http_5xx'],
  ] as const)('labels HTTP %i as %s', (status, outcome) => {
    expect(statusOutcome(status)).toBe(outcome);
  });
});

describe('failureLogName', () => {
  it('uses the reference error-kind names in logs', () => {
    expect((['http_401', 'http_403', 'http_4xx', 'http_5xx', 'invalid_response', 'unreachable'] as const).map(failureLogName)).toEqual([
      'Unauthorized',
      'Forbidden',
      'ClientError',
      'ServerError',
      'InvalidResponse',
      'Unreachable',
    ]);
  });
});
