import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createOutput } from '../../src/cli/output.js';

function stream(isTTY: boolean): NodeJS.WriteStream & { text(): string } {
  const s = new PassThrough() as unknown as NodeJS.WriteStream & { text(): string };
  let text = '';
  (s as unknown as PassThrough).on('data', (c: Buffer) => (text += c.toString()));
  Object.assign(s, { isTTY, text: () => text });
  return s;
}

describe('TTY-aware output', () => {
  it('is human on a terminal, NDJSON when piped or with --json', async () => {
    const tty = stream(true);
    const a = createOutput({ json: false, verbosity: 0 }, tty, stream(false));
    await a.result({ x: 1 }, 'x is 1');
    expect(a.human).toBe(true);
    expect(tty.text()).toBe('x is 1\n');
    const forced = stream(true);
    await createOutput({ json: true, verbosity: 0 }, forced, stream(false)).result({ x: 1 }, 'x is 1');
    expect(forced.text()).toBe('{"x":1}\n');
    const piped = stream(false);
    await createOutput({ json: false, verbosity: 0 }, piped, stream(false)).result({ x: 1 }, 'x is 1');
    expect(piped.text()).toBe('{"x":1}\n');
  });
  it('sends status lines and diagnostic records to stderr, debug records only with -v', () => {
    const err = stream(false);
    const quiet = createOutput({ json: false, verbosity: 0 }, stream(false), err);
    quiet.log.log('debug', 'hidden');
    quiet.line('Connecting for x [mars]...');
    quiet.error('boom');
    createOutput({ json: false, verbosity: 1 }, stream(false), err).log.log('debug', 'shown');
    const [connecting, boom, record] = err.text().split('\n');
    expect([connecting, boom]).toEqual(['Connecting for x [mars]...', 'Error: boom']);
    expect(JSON.parse(record ?? '')).toMatchObject({ severityText: 'DEBUG', body: 'shown' });
  });
  it('colors the human stdout only when --color asks for it', () => {
    expect(createOutput({ json: false, verbosity: 0, color: 'auto', env: {} }, stream(true), stream(false)).color).toBe(true);
    expect(createOutput({ json: false, verbosity: 0, color: 'auto', env: { NO_COLOR: '1' } }, stream(true), stream(false)).color).toBe(
      false,
    );
    expect(createOutput({ json: false, verbosity: 0, color: 'always', env: { NO_COLOR: '1' } }, stream(true), stream(false)).color).toBe(
      true,
    );
    expect(createOutput({ json: false, verbosity: 0 }, stream(true), stream(false)).color).toBe(false);
    expect(createOutput({ json: true, verbosity: 0, color: 'always' }, stream(true), stream(false)).color).toBe(false);
  });
  it('turns a closed pipe into an error of the next write instead of a crash', async () => {
    const out = stream(false);
    const o = createOutput({ json: false, verbosity: 0 }, out, stream(false));
    (out as unknown as PassThrough).emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    await expect(o.write('x\n')).rejects.toThrow('stdout was closed by its reader');
  });
});
