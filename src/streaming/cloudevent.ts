import { METADATA_KEYS, type StoredNotification } from '../backend/backend.js';
import { canonicalJson } from '../json/canonical-json.js';
import type { JsonObject, JsonValue } from '../json/json-value.js';
import { JsonSyntaxError, parseJsonBody } from '../json/lossless-parse.js';
import type { StoredIdentityReader } from '../schema/stored-identifier.js';
import { formatCloudEventTime } from '../time-format.js';

export class CloudEventRenderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CloudEventRenderError';
  }
}

type Rendered = { readonly json: string } | { readonly error: string };

/**
 * Renders a stored notification as the CloudEvent JSON of streaming.md §6, keys sorted. The
 * result depends only on the notification and the configuration, so it is computed once per
 * notification and shared by every stream that delivers it.
 */
export class CloudEventRenderer {
  private readonly cache = new WeakMap<StoredNotification, Rendered>();

  constructor(
    private readonly identities: StoredIdentityReader,
    private readonly baseUrl: string,
  ) {}

  /** The CloudEvent JSON text; throws `CloudEventRenderError` when the notification cannot be rendered. */
  render(notification: StoredNotification): string {
    let rendered = this.cache.get(notification);
    if (!rendered) {
      try {
        rendered = { json: canonicalJson(this.build(notification)) };
      } catch (error) {
        if (!(error instanceof CloudEventRenderError)) throw error;
        rendered = { error: error.message };
      }
      this.cache.set(notification, rendered);
    }
    if ('error' in rendered) throw new CloudEventRenderError(rendered.error);
    return rendered.json;
  }

  private build(notification: StoredNotification): Record<string, unknown> {
    const identity = this.identities.read(notification);
    if (!identity) throw new CloudEventRenderError(`topic '${notification.topic}' is not validly percent-encoded`);
    const { eventType } = identity;
    let dataschema: string;
    try {
      dataschema = new URL(`${this.baseUrl}/schema/${eventType}`).href;
    } catch {
      throw new CloudEventRenderError(`application.base_url '${this.baseUrl}' does not form a valid dataschema URL`);
    }
    return {
      data: { identifier: deliveredIdentifier(notification, identity.identifier), payload: payloadValue(notification.payload) },
      datacontenttype: 'application/json',
      dataschema,
      id: `${eventType}@${notification.sequence}`,
      source: this.baseUrl,
      specversion: '1.0',
      time: formatCloudEventTime(notification.timestampNs),
      type: `int.ecmwf.aviso.${eventType}`,
    };
  }
}

/** §6.1 step 3: spatial values travel in their own headers and are re-attached here. */
function deliveredIdentifier(notification: StoredNotification, identifier: Readonly<JsonObject>): JsonObject {
  const cloud = notification.metadata?.[METADATA_KEYS.spatialPointCloud];
  if (cloud === undefined) return { ...identifier };
  try {
    return { ...identifier, point_cloud: parseJsonBody(cloud) };
  } catch (error) {
    if (error instanceof JsonSyntaxError) throw new CloudEventRenderError(`stored point cloud is not JSON: ${error.message}`);
    throw error;
  }
}

/** §6.2: empty → null, JSON → that value (number text kept), anything else → the text as a string. */
function payloadValue(text: string): JsonValue {
  if (text === '') return null;
  try {
    return parseJsonBody(text);
  } catch (error) {
    if (error instanceof JsonSyntaxError) return text;
    throw error;
  }
}
