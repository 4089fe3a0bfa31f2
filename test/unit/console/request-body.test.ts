import { describe, expect, it } from 'vitest';
import { notifyBody, streamBody, type ConsoleForm, type FieldEntry } from '../../../console/src/request-body.js';

function form(fields: FieldEntry[], extra: Partial<ConsoleForm> = {}): ConsoleForm {
  return { eventType: 'extreme_event', fields, start: 'live', startValue: '', end: 'none', endValue: '', payload: '', ...extra };
}

const value = (name: string, text: string): FieldEntry => ({ name, operator: 'value', text });

describe('the watch and replay bodies built from the console form', () => {
  it('sends scalars as the text typed and leaves empty fields out', () => {
    expect(streamBody(form([value('region', 'NORTH'), value('run_time', ' 12:00 '), value('severity', '')]), 'watch')).toEqual({
      event_type: 'extreme_event',
      identifier: { region: 'NORTH', run_time: '12:00' },
    });
  });

  it('turns constraint operators into constraint objects with numbers where they look like numbers', () => {
    const body = streamBody(
      form([
        { name: 'severity', operator: 'gte', text: '5' },
        { name: 'anomaly', operator: 'between', text: '1.5, 40' },
        { name: 'region', operator: 'in', text: 'north,south' },
        { name: 'step', operator: 'eq', text: 'soon' },
      ]),
      'watch',
    );
    expect(body.identifier).toEqual({
      severity: { gte: 5 },
      anomaly: { between: [1.5, 40] },
      region: { in: ['north', 'south'] },
      // Not a number: sent as typed, for the server to name the problem.
      step: { eq: 'soon' },
    });
  });

  it('sends geometry typed as a JSON array as that array, and any other text unchanged', () => {
    const ring = '[[50,10],[52,10],[52,12],[50,10]]';
    expect(streamBody(form([value('polygon', ring)]), 'watch').identifier).toEqual({ polygon: [[50, 10], [52, 10], [52, 12], [50, 10]] });
    expect(streamBody(form([value('point', '51, 11')]), 'watch').identifier).toEqual({ point: '51, 11' });
    expect(streamBody(form([value('polygon', '[[50,10')]), 'watch').identifier).toEqual({ polygon: '[[50,10' });
  });

  it('adds the start cursor, and the end point on replay only', () => {
    const ranged = form([], { start: 'from_id', startValue: ' 3 ', end: 'to_id', endValue: '7' });
    expect(streamBody(ranged, 'replay')).toEqual({ event_type: 'extreme_event', identifier: {}, from_id: '3', to_id: '7' });
    expect(streamBody(ranged, 'watch')).toEqual({ event_type: 'extreme_event', identifier: {}, from_id: '3' });
    const dated = form([], { start: 'from_date', startValue: '2026-01-01T00:00:00Z', end: 'to_date', endValue: '2026-01-02' });
    expect(streamBody(dated, 'replay')).toEqual({
      event_type: 'extreme_event',
      identifier: {},
      from_date: '2026-01-01T00:00:00Z',
      to_date: '2026-01-02',
    });
  });
});

describe('the notify body built from the console form', () => {
  it('sends the identifier and a JSON payload', () => {
    expect(notifyBody(form([value('region', 'north')], { payload: '{"note": "a"}' }))).toEqual({
      event_type: 'extreme_event',
      identifier: { region: 'north' },
      payload: { note: 'a' },
    });
  });

  it('sends a payload that is not JSON as a string, and none when empty', () => {
    expect(notifyBody(form([], { payload: 'forecast complete' })).payload).toBe('forecast complete');
    expect(notifyBody(form([], { payload: '  ' }))).not.toHaveProperty('payload');
  });

  it('never sends the watch-only point filter, nor a start cursor', () => {
    expect(notifyBody(form([value('point', '[51,11]')], { start: 'from_id', startValue: '1' }))).toEqual({
      event_type: 'extreme_event',
      identifier: {},
    });
  });

  it('keeps a constraint object, which the server refuses on notify with its own message', () => {
    expect(notifyBody(form([{ name: 'severity', operator: 'gte', text: '5' }])).identifier).toEqual({ severity: { gte: 5 } });
  });
});
