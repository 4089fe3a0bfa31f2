import { describe, expect, it } from 'vitest';
import { formFields, type SchemaView } from '../../../console/src/schema-model.js';

const EXTREME: SchemaView = {
  identifier: {
    region: { type: 'EnumHandler', required: true, values: ['north', 'south'] },
    severity: { type: 'IntHandler', required: true, range: [1, 7] },
    anomaly: { type: 'FloatHandler', required: false, range: null },
    run_time: { type: 'TimeHandler', required: true, description: 'Run time' },
    polygon: { type: 'PolygonHandler', required: false },
  },
  payload: { required: false },
};

describe('the form fields of a schema', () => {
  it('lists fields alphabetically with the operators of their handler, required marks and hints', () => {
    const fields = formFields(EXTREME);
    expect(fields.map((f) => [f.name, f.input, f.required, f.operators.join(' ')])).toEqual([
      ['anomaly', 'number', false, 'value eq in gt gte lt lte between'],
      ['polygon', 'polygon', false, 'value'],
      ['point', 'point', false, 'value'],
      ['region', 'enum', true, 'value eq in'],
      ['run_time', 'text', true, 'value'],
      ['severity', 'number', true, 'value eq in gt gte lt lte between'],
    ]);
    expect(fields.find((f) => f.name === 'severity')?.hint).toBe('Int · range [1, 7]');
    expect(fields.find((f) => f.name === 'region')).toMatchObject({ values: ['north', 'south'], hint: 'Enum · one of north, south' });
    expect(fields.find((f) => f.name === 'run_time')?.description).toBe('Run time');
  });

  it('offers the polygon filter that selects point clouds', () => {
    const fields = formFields({ identifier: { point_cloud: { type: 'PointCloudHandler', required: true, max_points: 3 } }, payload: null });
    expect(fields.map((f) => [f.name, f.input])).toEqual([
      ['point_cloud', 'point_cloud'],
      ['polygon', 'polygon'],
    ]);
    expect(fields[0]?.hint).toContain('≤ 3 points');
  });
});
