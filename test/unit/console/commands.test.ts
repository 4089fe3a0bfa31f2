import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { avisoCommand, curlCommand, shellQuote } from '../../../console/src/commands.js';

const BASE = 'http://localhost:8000';

/** What a POSIX shell makes of a command line: its words, each printed on its own line. */
function shellWords(command: string): string[] {
  const script = `set -- ${command.replace(/^\S+/, '')}; for w in "$@"; do printf '%s\\0' "$w"; done`;
  return execFileSync('sh', ['-c', script], { env: { AVISO_TOKEN: 'tok' }, encoding: 'utf8' })
    .split('\0')
    .slice(0, -1);
}

describe('shell quoting', () => {
  it('leaves safe words bare and single-quotes the rest, quotes included', () => {
    expect(shellQuote('http://localhost:8000/api/v1/watch')).toBe('http://localhost:8000/api/v1/watch');
    expect(shellQuote('{"a":1}')).toBe(`'{"a":1}'`);
    expect(shellQuote(`it's $HOME`)).toBe(`'it'\\''s $HOME'`);
    expect(shellQuote('')).toBe(`''`);
  });

  it('survives a real shell unchanged', () => {
    const tricky = `a b 'c' "d" $e \`f\` \\g !h`;
    expect(shellWords(`x ${shellQuote(tricky)} ${shellQuote('')}`)).toEqual([tricky, '']);
  });
});

describe('the curl command', () => {
  const body = { event_type: 'mars', identifier: { class: "o'd" }, from_id: '3' };

  it('streams with -N and posts the exact JSON body', () => {
    const command = curlCommand({ baseUrl: BASE, operation: 'watch', body, withToken: false });
    expect(command).toBe(
      `curl -N -X POST http://localhost:8000/api/v1/watch -H 'Content-Type: application/json' -d '{"event_type":"mars","identifier":{"class":"o'\\''d"},"from_id":"3"}'`,
    );
    expect(JSON.parse(shellWords(command).at(-1)!)).toEqual(body);
  });

  it('reads the token from $AVISO_TOKEN, never writing it out, and drops -N on notify', () => {
    const command = curlCommand({ baseUrl: `${BASE}/`, operation: 'notify', body, withToken: true });
    expect(command).toContain('-H "Authorization: Bearer $AVISO_TOKEN"');
    expect(command).not.toContain(' -N ');
    expect(shellWords(command)).toContain('Authorization: Bearer tok');
    expect(command).toContain('http://localhost:8000/api/v1/notification');
  });
});

describe('the aviso command', () => {
  it('notify: event=, one --identifier per field (typed with := when not a string), data=', () => {
    const command = avisoCommand({
      baseUrl: BASE,
      operation: 'notify',
      body: {
        event_type: 'test_polygon',
        identifier: {
          date: '20250706',
          polygon: [
            [50, 10],
            [52, 10],
            [52, 12],
            [50, 10],
          ],
        },
        payload: { note: "it's" },
      },
      withToken: true,
    });
    expect(shellWords(command)).toEqual([
      '--base-url',
      BASE,
      '--token',
      'tok',
      'notify',
      'event=test_polygon',
      '--identifier',
      'date=20250706',
      '--identifier',
      'polygon:=[[50,10],[52,10],[52,12],[50,10]]',
      `data={"note":"it's"}`,
    ]);
  });

  it('watch: listen with --identifiers, and from_id n as --from n-1 (the CLI starts after it)', () => {
    const command = avisoCommand({
      baseUrl: BASE,
      operation: 'watch',
      body: { event_type: 'mars', identifier: { step: { gte: 6 } }, from_id: '10' },
      withToken: false,
    });
    expect(command).toBe(`aviso --base-url http://localhost:8000 listen --event mars --identifiers '{"step":{"gte":6}}' --from 9`);
    expect(
      avisoCommand({ baseUrl: BASE, operation: 'watch', body: { event_type: 'mars', identifier: {}, from_id: '0' }, withToken: false }),
    ).toContain('--from 0');
    expect(
      avisoCommand({ baseUrl: BASE, operation: 'watch', body: { event_type: 'mars', identifier: {} }, withToken: false }),
    ).not.toContain('--from');
  });

  it('replay: --from and an inclusive --until, by sequence or date', () => {
    expect(
      avisoCommand({
        baseUrl: BASE,
        operation: 'replay',
        body: { event_type: 'mars', identifier: {}, from_id: '1', to_id: '5' },
        withToken: false,
      }),
    ).toBe(`aviso --base-url http://localhost:8000 replay --event mars --identifiers '{}' --from 0 --until 5`);
    const dated = avisoCommand({
      baseUrl: BASE,
      operation: 'replay',
      body: { event_type: 'mars', identifier: {}, from_date: '2026-05-01 14:30', to_date: '2026-05-02' },
      withToken: false,
    });
    expect(shellWords(dated).slice(-4)).toEqual(['--from', '2026-05-01 14:30', '--until', '2026-05-02']);
  });
});
