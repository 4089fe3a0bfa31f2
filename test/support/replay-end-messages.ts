/** docs/design/rules/reference-0.13.md §1: the end point's messages, byte for byte, as the spec words them. */
export const BOTH_ENDS =
  'Cannot specify both to_id and to_date. Please provide only one replay end parameter. Use to_id for a sequence-based end or to_date for a time-based end.';
export const TO_ID_EMPTY = 'to_id cannot be empty. Provide a valid sequence number or omit the field';
export const TO_DATE_EMPTY = 'to_date cannot be empty. Provide a valid datetime/timestamp or omit the field';
export const invalidToId = (value: string) => `to_id must be a valid positive integer. Got: '${value}'. Valid examples: '1', '123', '9999'`;
export const invalidToDate = (value: string) =>
  `to_date must be a valid datetime/timestamp. Got: '${value}'. Error: expected ISO-8601 datetime (RFC3339/space-separated with optional timezone) or unix epoch seconds/milliseconds. Valid examples: '2025-06-09T13:15:00Z', '2025-06-09 13:15:00+00:00', '2025-06-09 13:15:00', '1740509903', '1740509903710'`;
