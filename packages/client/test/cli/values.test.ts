import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/errors.js';
import { collectIdentifiers, parseCursor, parseDuration, parseIdentifierArg, parseNotifyParameters } from '../../src/cli/values.js';

describe('durations', () => {
  it('reads humantime forms', () => {
    expect(parseDuration('30s', 't')).toBe(30_000);
    expect(parseDuration('2m', 't')).toBe(120_000);
    expect(parseDuration('1h30m', 't')).toBe(5_400_000);
    expect(parseDuration('500ms', 't')).toBe(500);
  });
  it('rejects anything else', () => {
    expect(() => parseDuration('30', 't')).toThrow(UsageError);
    expect(() => parseDuration('3 parsecs', 't')).toThrow(UsageError);
  });
});

describe('--from values', () => {
  it('treats pure digits as a sequence, never a date', () => {
    expect(parseCursor('42', '--from')).toEqual({ kind: 'sequence', sequence: 42 });
    expect(parseCursor('20260601', '--from')).toEqual({ kind: 'sequence', sequence: 20260601 });
  });
  it('normalises each documented date form to UTC', () => {
    expect(parseCursor('2026-05-01', '--from')).toEqual({ kind: 'date', date: '2026-05-01T00:00:00Z' });
    expect(parseCursor('2026-05-01 14:30', '--from')).toEqual({ kind: 'date', date: '2026-05-01T14:30:00Z' });
    expect(parseCursor('2026-05-01 14:30:05', '--from')).toEqual({ kind: 'date', date: '2026-05-01T14:30:05Z' });
    expect(parseCursor('2026-05-01T14:30:05', '--from')).toEqual({ kind: 'date', date: '2026-05-01T14:30:05Z' });
    expect(parseCursor('2026-05-01T14:30:05Z', '--from')).toEqual({ kind: 'date', date: '2026-05-01T14:30:05Z' });
    expect(parseCursor('2026-05-01T14:30:05.123456Z', '--from')).toEqual({ kind: 'date', date: '2026-05-01T14:30:05.123456Z' });
  });
  it('rejects the rest', () => {
    expect(() => parseCursor('yesterday', '--from')).toThrow(UsageError);
    expect(() => parseCursor('2026-13-45', '--from')).toThrow(UsageError);
  });
});

describe('identifier arguments', () => {
  it('keeps key=value an exact string and parses key:=JSON', () => {
    expect(parseIdentifierArg('label=commas,"quotes",$HOME=a:=b')).toEqual(['label', 'commas,"quotes",$HOME=a:=b']);
    expect(parseIdentifierArg('step:=12')).toEqual(['step', 12]);
    expect(parseIdentifierArg('region:={"in":["north","south"]}')).toEqual(['region', { in: ['north', 'south'] }]);
    expect(parseIdentifierArg(' class =od')).toEqual(['class', 'od']);
  });
  it('rejects a missing =, an empty key, bad JSON and duplicates', () => {
    expect(() => parseIdentifierArg('class')).toThrow(UsageError);
    expect(() => parseIdentifierArg('=x')).toThrow(UsageError);
    expect(() => parseIdentifierArg('step:=012')).toThrow(UsageError);
    expect(() => collectIdentifiers(['a=1', 'a:=1'])).toThrow(UsageError);
  });
});

describe('notify parameters', () => {
  it('reads the documented forms', () => {
    expect(parseNotifyParameters(['event=mars,class=od,step:=12,data={"location":"s3://bucket/path"}'], [])).toEqual({
      eventType: 'mars',
      identifier: { class: 'od', step: 12 },
      payload: { location: 's3://bucket/path' },
    });
    expect(parseNotifyParameters(['event=mars', 'class=od', 'step=12', 'data={"x":1}'], [])).toEqual({
      eventType: 'mars',
      identifier: { class: 'od', step: '12' },
      payload: { x: 1 },
    });
    expect(parseNotifyParameters(['event=observations,point_cloud=[[46,8],[47,9]],date=20260601'], []).identifier).toEqual({
      point_cloud: [
        [46, 8],
        [47, 9],
      ],
      date: '20260601',
    });
    expect(parseNotifyParameters(['event=t,label="[x]"'], []).identifier).toEqual({ label: '[x]' });
  });
  it('merges --identifier and rejects duplicates, event/data there, and a missing event', () => {
    expect(parseNotifyParameters(['event=mars'], ['class=od', 'step:=12']).identifier).toEqual({ class: 'od', step: 12 });
    expect(() => parseNotifyParameters(['event=mars,class=od'], ['class=rd'])).toThrow(UsageError);
    expect(() => parseNotifyParameters(['event=mars'], ['event=x'])).toThrow(UsageError);
    expect(() => parseNotifyParameters(['class=od'], [])).toThrow(/event=<TYPE> is required/);
    expect(() => parseNotifyParameters(['event=mars,data={bad'], [])).toThrow(UsageError);
  });
});
