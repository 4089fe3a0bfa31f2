/**
 * Request bodies the scenarios send. Identifier values follow config/config.yaml's event types;
 * notify requires every declared field.
 */

import { MARS_EXAMPLE } from '../../test/support/schemas.js';

/** The notify example of docs/api.md (mars), used by the notify scenarios: the tests' own copy. */
export const MARS_NOTIFICATION = MARS_EXAMPLE;

/** A mars notification with its own step (distinct topics), for the replay store. */
export function marsNotification(step: number): { event_type: string; identifier: Record<string, string>; payload: unknown } {
  return {
    event_type: 'mars',
    identifier: { ...MARS_NOTIFICATION.identifier, step: String(step) },
    payload: { location: `/data/od/enfo/${step}.grib`, size: 123456 + step },
  };
}

/** The area every fan-out notification carries (latitude, longitude pairs, closed). */
export const FANOUT_POLYGON = '(50.0,10.0,52.0,10.0,52.0,12.0,50.0,12.0,50.0,10.0)';
export const FANOUT_IDENTIFIER = {
  region: 'north',
  run_time: '1200',
  severity: '5',
  anomaly: '12.5',
  polygon: FANOUT_POLYGON,
} as const;

/** The fan-out notification with its sequence number and send time (epoch ms) in the payload. */
export function fanoutNotificationBody(index: number, sentMs: number): string {
  return `{"event_type":"extreme_event","identifier":${JSON.stringify(FANOUT_IDENTIFIER)},"payload":{"i":${index},"sent_ms":${sentMs.toFixed(3)}}}`;
}

/**
 * Watch request `index` of the fan-out fleet. Even ones filter by constraint (`severity` ≥ 1…5),
 * odd ones by a polygon shifted a little per watcher; every one matches every notification.
 */
export function fanoutWatchBody(index: number): string {
  const common = { region: 'north', run_time: '1200' };
  if (index % 2 === 0) {
    return JSON.stringify({ event_type: 'extreme_event', identifier: { ...common, severity: { gte: 1 + (index % 5) } } });
  }
  const shift = (index % 10) / 10;
  const [lat, lon] = [51 + shift, 11 + shift];
  const ring = [
    [lat, lon],
    [lat + 2, lon],
    [lat + 2, lon + 2],
    [lat, lon + 2],
    [lat, lon],
  ];
  const polygon = `(${ring.map(([a, b]) => `${(a as number).toFixed(1)},${(b as number).toFixed(1)}`).join(',')})`;
  return JSON.stringify({ event_type: 'extreme_event', identifier: { ...common, severity: '*', polygon } });
}

/** A live-only watch of every od mars notification: the idle streams. */
export const IDLE_WATCH_BODY = JSON.stringify({ event_type: 'mars', identifier: { class: 'od' } });

/**
 * The CloudEvent aviso renders for a fan-out notification, for the baseline server to send frames
 * of the same shape and size.
 */
export function fanoutCloudEvent(index: number, sentMs: number): string {
  return JSON.stringify({
    data: { identifier: FANOUT_IDENTIFIER, payload: { i: index, sent_ms: Number(sentMs.toFixed(3)) } },
    datacontenttype: 'application/json',
    dataschema: 'http://localhost:8000/schema/extreme_event',
    id: `extreme_event@${index + 1}`,
    source: 'http://localhost:8000',
    specversion: '1.0',
    time: new Date().toISOString(),
    type: 'int.ecmwf.aviso.extreme_event',
  });
}

/**
 * Watch request `watcher` of `fanout_selective`: every mars identifier field given, with its own
 * `step`, so each watcher has a topic of its own and no wildcard.
 */
export function selectiveWatchBody(watcher: number): string {
  return JSON.stringify({ event_type: 'mars', identifier: { ...MARS_NOTIFICATION.identifier, step: String(watcher) } });
}

/** The notification of `fanout_selective` for watcher `watcher`'s topic, with its index and send time. */
export function selectiveNotificationBody(watcher: number, index: number, sentMs: number): string {
  const identifier = JSON.stringify({ ...MARS_NOTIFICATION.identifier, step: String(watcher) });
  return `{"event_type":"mars","identifier":${identifier},"payload":{"i":${index},"sent_ms":${sentMs.toFixed(3)}}}`;
}
