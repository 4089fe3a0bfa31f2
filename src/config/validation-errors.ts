import type { AppConfig, EventSchemaConfig } from './model.js';

/**
 * What the stage-B checks raise and the helpers they share: the log event of each failure, the
 * error a failure is, the warnings a valid configuration may still carry.
 */

export const VALIDATION_EVENTS = {
  configuration: 'startup.configuration.validation.failed',
  auth: 'startup.auth.validation.failed',
  plugin: 'startup.auth.plugin_validation.failed',
  streamAuth: 'startup.auth.stream_validation.failed',
  metrics: 'startup.metrics.validation.failed',
  ecpds: 'startup.ecpds.validation.failed',
  backend: 'startup.backend.initialization.failed',
} as const;

export const WARNING_EVENTS = {
  strictDisabled: 'configuration.schema_strict.explicit_disabled',
  spatialKeyOrder: 'configuration.schema.spatial_key_order',
  adminOpen: 'configuration.auth.admin_open',
  deprecatedSetting: 'configuration.setting.deprecated',
} as const;

export class ConfigValidationError extends Error {
  constructor(
    /** The `event.name` the failure is logged with (docs/design/rules/operations.md §3.4.3). */
    readonly eventName: string,
    message: string,
  ) {
    // One line, always (operator-chosen names could hold a line break).
    super(message.replace(/\r?\n/g, '\\n'));
    this.name = 'ConfigValidationError';
  }
}

export interface ConfigWarning {
  event: string;
  message: string;
}

export type Fail = (message: string) => never;

export function failWith(event: string): Fail {
  return (message) => {
    throw new ConfigValidationError(event, message);
  };
}

export function configError(message: string): never {
  throw new ConfigValidationError(VALIDATION_EVENTS.configuration, message);
}

export function parseOr(text: string, parse: (text: string) => number, onError: (reason: string) => never): number {
  try {
    return parse(text);
  } catch (error) {
    return onError(error instanceof Error ? error.message : String(error));
  }
}

export function schemaEntries(config: AppConfig): [string, EventSchemaConfig][] {
  return Object.entries(config.notification_schema ?? {});
}

export function at(eventType: string, rest: string): string {
  return `notification_schema.${eventType}.${rest}`;
}

/** Blank, or with surrounding whitespace: both are typos in a name or secret. */
export function blankOrPadded(text: string): boolean {
  return text.trim() === '' || text.trim() !== text;
}
