import { describe, expect, it } from 'vitest';
import { configuredLevel, effectiveLevel } from '../../../src/logging/log-level.js';

describe('configuredLevel (docs/design/rules/operations.md §1.4.2)', () => {
  it.each([
    ['debug', 'debug'],
    ['WARN', 'warn'],
    [' error ', 'error'],
    ['verbose', 'info'],
    [undefined, 'info'],
  ])('reads %j as %s', (input, level) => {
    expect(configuredLevel(input)).toBe(level);
  });
});

describe('effectiveLevel with RUST_LOG (docs/design/rules/operations.md §3.4.2)', () => {
  it('uses logging.level when RUST_LOG is unset or blank', () => {
    expect(effectiveLevel('warn', undefined)).toEqual({ level: 'warn' });
    expect(effectiveLevel('warn', '   ')).toEqual({ level: 'warn' });
  });

  it('lets a bare level override, the last one winning', () => {
    expect(effectiveLevel('info', 'debug')).toEqual({ level: 'debug' });
    expect(effectiveLevel('info', 'aviso=trace,error')).toEqual({ level: 'error' });
  });

  it('ignores target directives and selectors when there is no bare level', () => {
    expect(effectiveLevel('warn', 'aviso_server=debug,hyper')).toEqual({ level: 'warn' });
  });

  it('falls back to logging.level with one warning when RUST_LOG does not parse', () => {
    const result = effectiveLevel('warn', '=debug');
    expect(result.level).toBe('warn');
    expect(result.warning).toBe("aviso-server: ignoring RUST_LOG '=debug': it does not parse; using logging.level (warn)");
    expect(effectiveLevel('info', 'aviso=loud').warning).toContain("'aviso=loud'");
  });

  it('truncates a long value in the warning to 200 characters', () => {
    const warning = effectiveLevel('info', `${'x'.repeat(300)}=bad`).warning ?? '';
    expect(warning).toContain(`'${'x'.repeat(200)}…'`);
  });
});
