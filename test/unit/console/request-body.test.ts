import { describe, expect, it } from 'vitest';
import { notifyBody, streamBody, type ConsoleForm, type FieldEntry } from '../../../console/src/request-body.js';
import type { FieldInput } from '../../../console/src/schema-model.js';

function form(fields: FieldEntry[], extra: Partial<ConsoleForm> = {}): ConsoleForm {
  return { eventType: 'extreme_event', fields, start: 'live', startValue: '', end: 'none', endValue: '', payload: '', ...extra };
}

const value = (name: string, text: string, input: FieldInput = 'text'): FieldEntry => ({ name, operator: 'value', input, text });

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
        { name: 'severity', operator: 'gte', input: 'number', text: '5' },
        { name: 'anomaly', operator: 'between', input: 'number', text: '1.5, 40' },
        { name: 'region', operator: 'in', input: 'enum', text: 'north,south' },
        { name: 'step', operator: 'eq', input: 'number', text: 'soon' },
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
    expect(streamBody(form([value('polygon', ring, 'polygon')]), 'watch').identifier).toEqual({
      polygon: [
        [50, 10],
        [52, 10],
        [52, 12],
        [50, 10],
      ],
    });
    expect(streamBody(form([value('point', '51, 11', 'point')]), 'watch').identifier).toEqual({ point: '51, 11' });
    expect(streamBody(form([value('polygon', '[[50,10', 'polygon')]), 'watch').identifier).toEqual({ polygon: '[[50,10' });
  });

  it('decides geometry by the input kind, not the name: a text field typed as a JSON array is sent as the text typed', () => {
    expect(streamBody(form([value('polygon', '[1,2]', 'text')]), 'watch').identifier).toEqual({ polygon: '[1,2]' });
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
    expect(notifyBody(form([value('point', '[51,11]', 'point')], { start: 'from_id', startValue: '1' }))).toEqual({
      event_type: 'extreme_event',
      identifier: {},
    });
  });

  it('keeps a constraint object, which the server refuses on notify with its own message', () => {
    expect(notifyBody(form([{ name: 'severity', operator: 'gte', input: 'number', text: '5' }])).identifier).toEqual({
      severity: { gte: 5 },
    });
  });
});
