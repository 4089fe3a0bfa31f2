/** The three POST endpoints that share one request model and differ in their error labels. */
export type EndpointName = 'notify' | 'watch' | 'replay';

export interface EndpointLabels {
  /** `error` field of shape-A bodies (docs/design/rules/api.md §9.2). */
  readonly label: string;
  /** `code` of validation failures. */
  readonly validationCode: string;
  /** Operation word inside messages such as `Required field 'x' missing for notify operation`. */
  readonly operation: string;
}

export const ENDPOINTS: Readonly<Record<EndpointName, EndpointLabels>> = {
  notify: { label: 'Invalid Notification Request', validationCode: 'INVALID_NOTIFICATION_REQUEST', operation: 'notify' },
  watch: { label: 'Invalid Watch Request', validationCode: 'INVALID_WATCH_REQUEST', operation: 'watch' },
  replay: { label: 'Invalid Replay Request', validationCode: 'INVALID_REPLAY_REQUEST', operation: 'replay' },
};
