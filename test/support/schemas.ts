/** Schemas shaped like the examples of docs/design/rules/schema-and-validation.md §2.3, shared by unit and end-to-end tests. */
export const LETTERS = 'abcdefghijklmnopqrstuvwxyz'.split('');

export const TEST_SCHEMAS = {
  mars: {
    topic: { base: 'mars', key_order: ['class', 'expver', 'domain', 'date', 'time', 'stream', 'step'] },
    identifier: {
      class: {
        type: 'StringHandler',
        max_length: 2,
        required: true,
        description: 'MARS class, for example od for operational data.',
      },
      expver: { type: 'ExpverHandler', default: '0001', required: false },
      domain: { type: 'EnumHandler', values: LETTERS, required: false },
      date: { type: 'DateHandler', canonical_format: '%Y%m%d', required: false },
      time: { type: 'TimeHandler', required: false },
      stream: { type: 'StringHandler', required: false },
      step: { type: 'IntHandler', range: [0, 100000], required: false },
    },
    payload: { required: false },
  },
  dissemination: {
    topic: { base: 'diss', key_order: ['destination', 'class'] },
    identifier: {
      destination: { type: 'StringHandler', required: true },
      class: { type: 'StringHandler', required: true },
    },
  },
  extreme_event: {
    topic: { base: 'extreme_event', key_order: ['region', 'run_time', 'severity', 'anomaly'] },
    identifier: {
      region: { type: 'EnumHandler', values: ['north', 'south', 'east', 'west'], required: true },
      run_time: { type: 'TimeHandler', required: true },
      severity: { type: 'IntHandler', range: [1, 7], required: true },
      anomaly: { type: 'FloatHandler', range: [0.0, 100.0], required: false },
      polygon: { type: 'PolygonHandler', required: false },
    },
    payload: { required: false },
  },
  test_polygon: {
    topic: { base: 'polygon', key_order: ['date', 'time'] },
    identifier: {
      date: { type: 'DateHandler', canonical_format: '%Y%m%d', required: false },
      time: { type: 'TimeHandler', required: false },
      polygon: { type: 'PolygonHandler', required: true },
    },
    payload: { required: true },
  },
  sensor_cloud: {
    topic: { base: 'sensor_cloud', key_order: ['date'] },
    identifier: {
      date: { type: 'DateHandler', required: true },
      point_cloud: { type: 'PointCloudHandler', required: true, max_points: 3 },
    },
    payload: { required: false },
  },
} as const;

/**
 * `logging` settings that write every client-error line: the server writes 20 a second of each
 * such event (D45), so a test that looks for one line among a burst of refusals lifts the limit.
 */
export const EVERY_CLIENT_ERROR_LINE = { client_error_lines_per_second: 1_000_000 } as const;

export function serverConfig(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    application: { host: '127.0.0.1', port: 0, base_url: 'http://localhost:8000' },
    notification_backend: { kind: 'in_memory', in_memory: { max_history_per_topic: 100 } },
    notification_schema: TEST_SCHEMAS,
    ...overrides,
  };
}

/** The notify example of docs/design/rules/api.md §5.3. */
export const MARS_EXAMPLE = {
  event_type: 'mars',
  identifier: {
    class: 'od',
    expver: '1',
    domain: 'G',
    date: '2025-07-06',
    time: '12:00',
    stream: 'ens.member.7',
    step: '007',
  },
  payload: 'forecast complete',
};
