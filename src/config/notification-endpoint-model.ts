import Type, { type Static } from 'typebox';
import { Value } from 'typebox/value';
import { unsigned } from './model-fields.js';

/**
 * The `notification_endpoint` section: the limits of batch notify, `POST /api/v1/notification/batch`
 * (docs/api.md#batch-notify-decision-d48, D48). Part of the configuration model (src/config/model.ts), kept
 * here so that file stays one thing per section.
 */
export const NotificationEndpointSchema = Type.Object(
  {
    max_batch_items: unsigned(
      'Notifications one batch notify may carry; a batch with more is refused whole with `413 BATCH_TOO_MANY_ITEMS`. > 0.',
      1000,
    ),
    max_batch_bytes: unsigned(
      'Body limit of batch notify in bytes, in place of `application.max_body_bytes` on that route; a larger body is refused whole with `413 PAYLOAD_TOO_LARGE`, before anything is stored. Each notification of a batch is still held to `application.max_body_bytes`, as if sent alone (`413 PAYLOAD_TOO_LARGE` for that item). > 0. Default 16 MiB.',
      16 * 1024 * 1024,
    ),
  },
  { default: {}, description: 'Batch notify (`POST /api/v1/notification/batch`). Optional; each field has its own default.' },
);

export type NotificationEndpointConfig = Static<typeof NotificationEndpointSchema>;

/** Every `notification_endpoint` default, for code that builds an app without a configuration file. */
export const NOTIFICATION_ENDPOINT_DEFAULTS: NotificationEndpointConfig = Value.Default(
  NotificationEndpointSchema,
  {},
) as NotificationEndpointConfig;

/** What is wrong with the section, as the line startup prints (the field path first), or undefined. */
export function notificationEndpointProblem(config: NotificationEndpointConfig): string | undefined {
  for (const field of ['max_batch_items', 'max_batch_bytes'] as const) {
    if (config[field] <= 0) return `notification_endpoint.${field}: must be greater than 0, got ${config[field]}`;
  }
  return undefined;
}
