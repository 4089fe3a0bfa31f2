import { METADATA_KEYS, type StoredNotification } from '../backend/backend.js';
import { canonicalJson } from '../json/canonical-json.js';
import type { JsonValue } from '../json/json-value.js';
import { JsonSyntaxError, parseJsonBody } from '../json/lossless-parse.js';
import type { StoredIdentity, StoredIdentityReader } from '../schema/stored-identifier.js';
import { formatCloudEventTime } from '../time/time-format.js';
import { deliveredPolygon } from './delivered-polygon.js';
import { frameText, sseIdLine } from './frames.js';

export class CloudEventRenderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CloudEventRenderError';
  }
}

/** The CloudEvent JSON and its `id` (`<event_type>@<sequence>`), or why it cannot be rendered. */
type Rendered = { readonly json: string; readonly id: string } | { readonly error: string };

type FrameEvent = 'live-notification' | 'replay';

/**
 * How a notification frame is written: `plain` is the POST wire; `with-id` adds the SSE `id:` line
 * a GET stream carries, so `EventSource` resumes with `Last-Event-ID`.
 */
export type FrameStyle = 'plain' | 'with-id';

type FrameKey = FrameEvent | `${FrameEvent} with-id`;

/**
 * Renders a stored notification as CloudEvents 1.0 JSON, keys sorted as the reference writes them
 * (docs/design/rules/streaming.md §6). The
 * result depends only on the notification and the configuration, so it is computed once per
 * notification and shared by every stream that delivers it.
 */
export class CloudEventRenderer {
  private cache = new WeakMap<StoredNotification, Rendered>();
  private frames = new WeakMap<StoredNotification, Partial<Record<FrameKey, Buffer>>>();
  private lastNotification: StoredNotification | undefined;
  private lastFrames: Partial<Record<FrameKey, Buffer>> | undefined;

  constructor(
    private readonly identities: StoredIdentityReader,
    private readonly baseUrl: string,
  ) {
    // A CloudEvent's `type` comes from the schema of its base: a reload makes rendered ones stale.
    identities.onForget(() => {
      this.cache = new WeakMap();
      this.frames = new WeakMap();
      this.lastNotification = undefined;
      this.lastFrames = undefined;
    });
  }

  /** The CloudEvent JSON text; throws `CloudEventRenderError` when the notification cannot be rendered. */
  render(notification: StoredNotification): string {
    return this.rendered(notification).json;
  }

  private rendered(notification: StoredNotification): { readonly json: string; readonly id: string } {
    let rendered = this.cache.get(notification);
    if (!rendered) {
      try {
        rendered = this.build(notification);
      } catch (error) {
        if (!(error instanceof CloudEventRenderError)) throw error;
        rendered = { error: error.message };
      }
      this.cache.set(notification, rendered);
    }
    if ('error' in rendered) throw new CloudEventRenderError(rendered.error);
    return rendered;
  }

  /**
   * The whole SSE frame of a notification, encoded once: a fan-out writes the same bytes to every
   * watcher instead of building and encoding the text per connection. Throws like `render`.
   */
  frameBytes(notification: StoredNotification, event: FrameEvent, style: FrameStyle = 'plain'): Buffer {
    const key = frameKey(event, style);
    // A fan-out asks for one notification watcher after watcher: the last one is kept at hand.
    if (notification === this.lastNotification) {
      const cached = this.lastFrames?.[key];
      if (cached) return cached;
    }
    let frames = this.frames.get(notification);
    if (!frames) {
      frames = {};
      this.frames.set(notification, frames);
    }
    this.lastNotification = notification;
    this.lastFrames = frames;
    const cached = frames[key];
    if (cached) return cached;
    const bytes = Buffer.from(styledFrameText(event, this.rendered(notification), style), 'utf8');
    frames[key] = bytes;
    return bytes;
  }

  /** Runs `run(notification)` with identity reads that cache nothing (`StoredIdentityReader.unshared`). */
  unshared<T>(run: (notification: StoredNotification) => T, notification: StoredNotification): T {
    return this.identities.unshared(run, notification);
  }

  /**
   * The same bytes as `frameBytes`, for a notification no other stream will deliver (a replay's own
   * read, a message object nobody else holds): rendered and cached nowhere. Throws like `render`.
   */
  unsharedFrameBytes(notification: StoredNotification, event: FrameEvent, style: FrameStyle = 'plain'): Buffer {
    return Buffer.from(styledFrameText(event, this.build(notification), style), 'utf8');
  }

  /**
   * The attributes in their sorted order, written directly: this runs once per notification on
   * the delivery path. A payload aviso-ts stored is already canonical JSON and is spliced in as is.
   */
  private build(notification: StoredNotification): { readonly json: string; readonly id: string } {
    const identity = this.identities.read(notification);
    if (!identity) throw new CloudEventRenderError(`topic '${notification.topic}' is not validly percent-encoded`);
    const { eventType } = identity;
    const identifier = deliveredIdentifierJson(notification, identity);
    const payload =
      identity.identifierJson !== undefined && notification.payload !== ''
        ? notification.payload
        : canonicalJson(payloadValue(notification.payload));
    const id = `${eventType}@${notification.sequence}`;
    const json =
      `{"data":{"identifier":${identifier},"payload":${payload}},` +
      `"datacontenttype":"application/json",` +
      `"dataschema":${JSON.stringify(this.dataschema(eventType, identity.schema !== undefined))},` +
      `"id":${JSON.stringify(id)},` +
      `"source":${JSON.stringify(this.baseUrl)},` +
      `"specversion":"1.0",` +
      `"time":"${formatCloudEventTime(notification.timestampNs)}",` +
      `"type":${JSON.stringify(`int.ecmwf.aviso.${eventType}`)}}`;
    return { json, id };
  }

  private readonly dataschemas = new Map<string, string>();

  /**
   * `<base_url>/schema/<event_type>` normalised as a URL, remembered for configured event types
   * only: schema-less names are chosen by callers and must not grow the cache.
   */
  private dataschema(eventType: string, configured: boolean): string {
    let href = this.dataschemas.get(eventType);
    if (href === undefined) {
      try {
        href = new URL(`${this.baseUrl}/schema/${eventType}`).href;
      } catch {
        throw new CloudEventRenderError(`application.base_url '${this.baseUrl}' does not form a valid dataschema URL`);
      }
      if (configured) this.dataschemas.set(eventType, href);
    }
    return href;
  }
}

/** Constant keys: `frameBytes` runs once per watcher per notification. */
const WITH_ID_KEYS: Readonly<Record<FrameEvent, FrameKey>> = {
  'live-notification': 'live-notification with-id',
  replay: 'replay with-id',
};

function frameKey(event: FrameEvent, style: FrameStyle): FrameKey {
  return style === 'plain' ? event : WITH_ID_KEYS[event];
}

function styledFrameText(event: FrameEvent, rendered: { readonly json: string; readonly id: string }, style: FrameStyle): string {
  const text = frameText(event, rendered.json);
  return style === 'plain' ? text : `${sseIdLine(rendered.id)}${text}`;
}

/**
 * The identifier's canonical JSON. Without a point cloud or a polygon to re-attach or rewrite, the
 * D7 header aviso-ts wrote is that text already (notify stores `canonicalJson` of the same values),
 * so it is used verbatim.
 */
function deliveredIdentifierJson(notification: StoredNotification, identity: StoredIdentity): string {
  const hasPointCloud = notification.metadata?.[METADATA_KEYS.spatialPointCloud] !== undefined;
  const geometric = hasGeometricPolygon(notification, identity);
  if (identity.identifierJson !== undefined && !hasPointCloud && !geometric) return identity.identifierJson;
  return canonicalJson(deliveredIdentifier(notification, identity.identifier, geometric));
}

/**
 * Whether `identifier.polygon` is geometry, rendered as the canonical array (D27): a PolygonHandler
 * field, or without a schema, a notification that carries `spatial_geometry`. A schema-less event
 * type's `polygon` written by aviso-ts is a plain topic value and stays a string.
 */
function hasGeometricPolygon(notification: StoredNotification, identity: StoredIdentity): boolean {
  if (!Object.hasOwn(identity.identifier, 'polygon')) return false;
  if (identity.schema) return identity.schema.fields.get('polygon')?.handler.kind === 'polygon';
  return notification.metadata?.[METADATA_KEYS.spatialGeometry] !== undefined;
}

/** The stored identifier as delivered: spatial values travel in their own headers and are re-attached here. */
function deliveredIdentifier(
  notification: StoredNotification,
  stored: Readonly<Record<string, unknown>>,
  geometric: boolean,
): Record<string, unknown> {
  const identifier = geometric ? { ...stored, polygon: deliveredPolygon(stored.polygon) } : { ...stored };
  const cloud = notification.metadata?.[METADATA_KEYS.spatialPointCloud];
  if (cloud === undefined) return identifier;
  try {
    return { ...identifier, point_cloud: parseJsonBody(cloud) };
  } catch (error) {
    if (error instanceof JsonSyntaxError) throw new CloudEventRenderError(`stored point cloud is not JSON: ${error.message}`);
    throw error;
  }
}

/** The payload as delivered: empty → null, JSON → that value (number text kept), anything else → the text as a string. */
function payloadValue(text: string): JsonValue {
  if (text === '') return null;
  try {
    return parseJsonBody(text);
  } catch (error) {
    if (error instanceof JsonSyntaxError) return text;
    throw error;
  }
}
