import { describe, expect, it } from 'vitest';
import {
  GENERIC_EVENT_TYPE,
  UNKNOWN_EVENT_TYPE,
  UNMATCHED_ROUTE,
  eventTypeLabel,
  methodLabel,
  routeLabel,
} from '../../../src/metrics/labels.js';

describe('routeLabel', () => {
  it('keeps static patterns as they are', () => {
    for (const pattern of ['/', '/health', '/api/v1/notification', '/api/v1/watch', '/api/v1/replay', '/api/v1/schema']) {
      expect(routeLabel(pattern)).toBe(pattern);
    }
    expect(routeLabel('/api/v1/admin/wipe/stream')).toBe('/api/v1/admin/wipe/stream');
    expect(routeLabel('/api-docs/openapi.json')).toBe('/api-docs/openapi.json');
  });

  it('writes fastify parameters as {name} placeholders', () => {
    expect(routeLabel('/api/v1/schema/:event_type')).toBe('/api/v1/schema/{event_type}');
    expect(routeLabel('/api/v1/admin/notification/:notification_id')).toBe('/api/v1/admin/notification/{notification_id}');
  });

  it('drops a parameter regular expression and handles several parameters', () => {
    expect(routeLabel('/a/:id(^\\d+)/b')).toBe('/a/{id}/b');
    expect(routeLabel('/a/:id(^(\\d+)x)')).toBe('/a/{id}');
    expect(routeLabel('/range/:from-:to')).toBe('/range/{from}-{to}');
    expect(routeLabel('/opt/:name?')).toBe('/opt/{name}');
  });

  it('keeps an escaped literal colon', () => {
    expect(routeLabel('/time/12::30')).toBe('/time/12:30');
  });

  it('labels static-file wildcard routes by their prefix', () => {
    expect(routeLabel('/static/*')).toBe('/static');
    expect(routeLabel('/swagger-ui/*')).toBe('/swagger-ui');
  });

  it('labels a request without a route pattern unmatched', () => {
    expect(routeLabel(undefined)).toBe(UNMATCHED_ROUTE);
    expect(routeLabel('')).toBe('unmatched');
  });
});

describe('methodLabel', () => {
  it('keeps the nine standard methods', () => {
    for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'CONNECT', 'TRACE']) {
      expect(methodLabel(method)).toBe(method);
    }
  });

  it('buckets anything else as other', () => {
    expect(methodLabel('PROPFIND')).toBe('other');
    expect(methodLabel('get')).toBe('other');
    expect(methodLabel('')).toBe('other');
    expect(methodLabel(undefined)).toBe('other');
  });
});

describe('eventTypeLabel', () => {
  const configured = new Set(['mars', 'diss']);

  it('passes a configured schema name through', () => {
    expect(eventTypeLabel(configured, 'mars', false)).toBe('mars');
  });

  it('collapses an unknown type accepted in non-strict mode to generic', () => {
    expect(eventTypeLabel(configured, 'whatever', false)).toBe(GENERIC_EVENT_TYPE);
    expect(eventTypeLabel(new Set(), 'mars')).toBe('generic');
  });

  it('is unknown when the body gave no type or strict mode rejected it', () => {
    expect(eventTypeLabel(configured, undefined, false)).toBe(UNKNOWN_EVENT_TYPE);
    expect(eventTypeLabel(configured, 'whatever', true)).toBe('unknown');
  });

  it('never lets caller text through for unknown types', () => {
    const labels = new Set<string>();
    for (let index = 0; index < 1000; index++) labels.add(eventTypeLabel(configured, `type-${index}`, false));
    expect([...labels]).toEqual(['generic']);
  });
});
