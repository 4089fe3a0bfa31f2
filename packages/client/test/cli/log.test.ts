import { describe, expect, it } from 'vitest';
import { colorEnabled, createLogger, jsonRecord, textRecord, threshold, thresholdFromDirectives } from '../../src/cli/log.js';

const AT = new Date('2026-05-22T12:19:15.333Z');

function sink(isTTY: boolean): { isTTY: boolean; text: string; write(chunk: string): boolean } {
  return {
    isTTY,
    text: '',
    write(chunk: string) {
      this.text += chunk;
      return true;
    },
  };
}

describe('the level: -v/-vv, replaced by AVISO_LOG', () => {
  it('is info by default, debug with -v, trace with -vv', () => {
    expect([threshold(0, undefined), threshold(1, undefined), threshold(2, undefined)]).toEqual(['info', 'debug', 'trace']);
  });
  it('takes AVISO_LOG over -v, as an EnvFilter directive list (our records are target aviso)', () => {
    expect(threshold(2, 'warn')).toBe('warn');
    expect(thresholdFromDirectives('warn,aviso=debug')).toBe('debug');
    expect(thresholdFromDirectives('h2=debug,hyper=debug,aviso=trace')).toBe('trace');
    expect(thresholdFromDirectives('hyper=debug')).toBe('warn');
    expect(thresholdFromDirectives('error')).toBe('error');
    expect(thresholdFromDirectives('aviso=off')).toBe('off');
    expect(thresholdFromDirectives('nonsense,aviso=loud')).toBe('warn');
  });
  it('filters records below it', () => {
    const err = sink(false);
    const log = createLogger({ stderr: err, verbosity: 0, env: { AVISO_LOG: 'warn' }, color: false, version: '1.2.3', now: () => AT });
    log.log('info', 'Retrying listener connection');
    log.log('warn', 'kept');
    expect(
      err.text
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { body: string }).body),
    ).toEqual(['kept']);
    expect(log.enabled('info')).toBe(false);
  });
});

describe('the shape of a record', () => {
  const record = {
    at: AT,
    level: 'info' as const,
    body: 'Retrying listener connection',
    attributes: { listener: 'mars-od', cause: 'HTTP 503', delay_ms: 250 },
  };
  it('is an OpenTelemetry log record when stderr is not a terminal', () => {
    expect(JSON.parse(jsonRecord(record, '1.2.3', 'prod'))).toEqual({
      timestamp: '2026-05-22T12:19:15.333000Z',
      severityText: 'INFO',
      severityNumber: 9,
      body: 'Retrying listener connection',
      resource: { 'service.name': 'aviso-cli', 'service.version': '1.2.3', 'deployment.environment': 'prod' },
      attributes: { listener: 'mars-od', cause: 'HTTP 503', delay_ms: 250 },
    });
    expect(JSON.parse(jsonRecord({ ...record, level: 'warn', attributes: {} }, '1', undefined))).not.toHaveProperty('attributes');
  });
  it('is a compact line on a terminal, its level colored only when asked', () => {
    expect(textRecord(record, false)).toBe(
      '12:19:15.333  INFO Retrying listener connection listener=mars-od cause="HTTP 503" delay_ms=250\n',
    );
    expect(textRecord({ ...record, level: 'warn' }, true)).toContain('\u001b[33m WARN\u001b[0m');
    const tty = sink(true);
    createLogger({ stderr: tty, verbosity: 0, env: {}, color: false, version: '1', now: () => AT }).log('error', 'boom');
    expect(tty.text).toBe('12:19:15.333 ERROR boom\n');
  });
  it('--color: always beats NO_COLOR, auto needs a terminal and no NO_COLOR, never is never', () => {
    expect(colorEnabled('always', false, { NO_COLOR: '' })).toBe(true);
    expect(colorEnabled('auto', true, {})).toBe(true);
    expect(colorEnabled('auto', true, { NO_COLOR: '' })).toBe(false);
    expect(colorEnabled('auto', false, {})).toBe(false);
    expect(colorEnabled('never', true, {})).toBe(false);
  });
});
