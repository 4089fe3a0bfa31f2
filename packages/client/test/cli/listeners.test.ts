import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/errors.js';
import { parseListenerFile } from '../../src/cli/listeners.js';

const fixture = (name: string): string => readFileSync(join(import.meta.dirname, 'fixtures', name), 'utf8');

describe('listener files from the aviso client documentation', () => {
  it('reads the minimal example', () => {
    expect(parseListenerFile(fixture('listener-minimal.yaml'), 'f')).toEqual([
      {
        name: 'mars-od',
        event: 'mars',
        identifiers: { class: 'od' },
        triggers: [{ type: 'echo', retries: 0, required: true }],
        fromId: undefined,
        fromDate: undefined,
      },
    ]);
  });
  it('keeps constraint mappings and polygons as JSON values', () => {
    const [weather] = parseListenerFile(fixture('listener-constraints.yaml'), 'f');
    expect(weather?.identifiers).toEqual({
      date: '20260913',
      severity: { gte: 5 },
      anomaly: { between: [40, 50] },
      region: { in: ['north', 'south'] },
    });
    const [alpine] = parseListenerFile(fixture('listener-polygon.yaml'), 'f');
    expect(alpine?.identifiers.polygon).toEqual([
      [46, 8],
      [46, 9],
      [47, 9],
      [47, 8],
      [46, 8],
    ]);
  });
  it('reads every trigger kind with its defaults', () => {
    const [l] = parseListenerFile(fixture('listener-trigger-fields.yaml'), 'f');
    expect(l?.triggers.map((t) => t.type)).toEqual(['echo', 'log', 'command', 'webhook', 'teams', 'post']);
    expect(l?.triggers[2]).toMatchObject({
      timeoutMs: 30_000,
      failFast: true,
      env: { DATA_DIR: '/var/lib/aviso/data' },
      workingDir: '/var/lib/aviso',
    });
    expect(l?.triggers[3]).toMatchObject({ method: 'POST', timeoutMs: 30_000 });
    expect(l?.triggers[4]).toMatchObject({
      url: '{{ env.TEAMS_WEBHOOK_URL }}',
      titleTemplate: 'Custom {{ notification.event_type }}',
      timeoutMs: 30_000,
      failFast: true,
    });
    expect(l?.triggers[5]).toMatchObject({ url: 'https://receiver.example/aviso', timeoutMs: 30_000, failFast: true });
    const [, rd] = parseListenerFile(fixture('listener-publish-and-listen.yaml'), 'f');
    expect(rd?.triggers[0]).toMatchObject({ type: 'command', timeoutMs: undefined });
  });
});

describe('listener file validation', () => {
  const bad = (yaml: string): string => {
    try {
      parseListenerFile(yaml, 'x.yaml');
    } catch (error) {
      expect(error).toBeInstanceOf(UsageError);
      return (error as Error).message;
    }
    throw new Error('accepted');
  };
  it('rejects unknown keys at every level', () => {
    expect(bad('listeners: []\nextra: 1')).toMatch(/unknown key "extra"/);
    expect(bad('listeners:\n  - event: mars\n    identifier: {}')).toMatch(/listener 1: unknown key "identifier"/);
    expect(bad('listeners:\n  - event: mars\n    triggers:\n      - type: echo\n        timeout: 5s')).toMatch(/unknown key "timeout"/);
    expect(bad('listeners:\n  - event: mars\n    triggers:\n      - type: log\n        path: x\n        fail_fast: true')).toMatch(
      /unknown key "fail_fast"/,
    );
    expect(bad('listeners:\n  - event: mars\n    triggers:\n      - type: post\n        url: http://x\n        method: PUT')).toMatch(
      /unknown key "method"/,
    );
  });
  it('rejects bad values', () => {
    expect(bad('listeners:\n  - name: x')).toMatch(/"event" must be a non-empty string/);
    expect(bad('listeners:\n  - event: mars\n    from_id: 1\n    from_date: "2026-01-01T00:00:00Z"')).toMatch(/mutually exclusive/);
    expect(bad('listeners:\n  - event: mars\n    triggers:\n      - type: email')).toMatch(
      /"type" must be one of echo, log, command, webhook, post, teams/,
    );
    expect(bad('listeners:\n  - event: mars\n    triggers:\n      - type: teams')).toMatch(/"url" must be a non-empty string/);
    expect(bad('listeners:\n  - event: mars\n    triggers:\n      - type: teams\n        url: x\n        headers: {}')).toMatch(
      /unknown key "headers"/,
    );
    expect(bad('listeners:\n  - event: mars\n    triggers:\n      - type: webhook\n        url: http://x\n        method: post')).toMatch(
      /"method"/,
    );
    expect(bad('listeners:\n  - event: mars\n    triggers:\n      - type: echo\n        retries: -1')).toMatch(/"retries"/);
    expect(bad('listeners:\n  - event: mars\n    triggers:\n      - type: command\n        command: x\n        timeout: soon')).toMatch(
      /not a duration/,
    );
    expect(bad('nope: [')).toMatch(/not valid YAML/);
  });
});
