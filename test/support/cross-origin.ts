/** The body of `403 CROSS_ORIGIN_REQUEST_REFUSED` (docs/api.md), less its request id. */
export const CROSS_ORIGIN_REFUSAL = {
  code: 'CROSS_ORIGIN_REQUEST_REFUSED',
  error: 'cross_origin_request_refused',
  message: 'A request from another origin may change nothing here unless application.cors.allowed_origins allows that origin',
} as const;
