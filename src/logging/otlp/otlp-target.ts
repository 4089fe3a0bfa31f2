/** docs/design/rules/reference-0.13.md §7, byte for byte. */
export const OTLP_MISSING_ENDPOINT = 'logging.otlp.enabled=true requires logging.otlp.endpoint';

export type OtlpProtocol = 'grpc' | 'http';

/** `logging.otlp` as this module reads it (the configuration model's section has this shape). */
export interface OtlpSettings {
  readonly enabled: boolean;
  readonly endpoint?: string | undefined;
  readonly protocol: OtlpProtocol;
}

/** Where and how records are exported; `undefined` when export is off. */
export interface OtlpTarget {
  readonly protocol: OtlpProtocol;
  /** The URL handed to the exporter as is (already normalised). */
  readonly url: string;
}

/**
 * Resolves `logging.otlp`. Throws `OTLP_MISSING_ENDPOINT` when export is enabled without a usable
 * endpoint (absent or blank): the operator asked for export, so quietly not exporting would hide
 * that collection is broken.
 */
export function otlpTarget(config: OtlpSettings): OtlpTarget | undefined {
  if (!config.enabled) return undefined;
  const endpoint = config.endpoint?.trim() ?? '';
  if (endpoint === '') throw new Error(OTLP_MISSING_ENDPOINT);
  return { protocol: config.protocol, url: otlpExportUrl(endpoint, config.protocol) };
}

/**
 * A scheme-less endpoint gets `http://` (in-cluster collectors are usually plaintext; TLS must be
 * spelled `https://`). For OTLP/HTTP the exporters use a programmatic URL verbatim, so the logs
 * path `/v1/logs` is appended unless the endpoint already ends with it. gRPC addresses a service,
 * not a path, so it is left alone.
 */
export function otlpExportUrl(endpoint: string, protocol: OtlpProtocol): string {
  const withScheme = endpoint.includes('://') ? endpoint : `http://${endpoint}`;
  if (protocol === 'grpc') return withScheme;
  const base = withScheme.replace(/\/+$/u, '');
  return base.endsWith('/v1/logs') ? base : `${base}/v1/logs`;
}
