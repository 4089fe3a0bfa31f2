import { MAX_POINT_CLOUD_POINTS } from '../schema/identifier-rule.js';
import { STORAGE_POLICY_FIELDS, type AppConfig, type EventSchemaConfig, type IdentifierRuleConfig } from './model.js';
import { parseDuration, parseSize } from './units.js';
import { WARNING_EVENTS, at, configError, parseOr, schemaEntries, type ConfigWarning } from './validation-errors.js';

/**
 * D31 (docs/design/rules/reference-0.13.md §6): a base is used unescaped as the first subject token and, upper-cased,
 * as the stream name, so it is limited to what both accept without percent-encoding.
 */
const TOPIC_BASE = /^[A-Za-z0-9][A-Za-z0-9_-]*$/u;
const TOPIC_BASE_RULE = 'topic base must match [A-Za-z0-9][A-Za-z0-9_-]*';
export function checkSchemas(config: AppConfig, warnings: ConfigWarning[]): void {
  const schemas = schemaEntries(config);
  const kind = config.notification_backend.kind;

  // D31 valid topic bases, then B1.2 unique ones, ignoring ASCII case. The message names the
  // earlier schema first and quotes the base as the later one spells it, as the reference does.
  for (const [eventType, schema] of schemas) {
    if (schema.topic !== undefined && !TOPIC_BASE.test(schema.topic.base)) {
      configError(`Schema '${eventType}' has invalid topic base: ${TOPIC_BASE_RULE}`);
    }
  }
  const owners = new Map<string, string>();
  for (const [eventType, schema] of schemas) {
    if (schema.topic === undefined) continue;
    const key = asciiLower(schema.topic.base);
    const owner = owners.get(key);
    if (owner !== undefined) {
      configError(`Schemas '${owner}' and '${eventType}' both define topic base '${schema.topic.base}'`);
    }
    owners.set(key, eventType);
  }

  // B1.3 key_order ⊆ identifier (D8)
  for (const [eventType, schema] of schemas) {
    schema.topic?.key_order.forEach((name, index) => {
      if (!Object.hasOwn(schema.identifier, name)) {
        configError(`${at(eventType, `topic.key_order[${index}]`)}: '${name}' is not declared in ${at(eventType, 'identifier')}`);
      }
    });
  }

  // B1.4 storage_policy needs topic
  for (const [eventType, schema] of schemas) {
    if (schema.storage_policy !== undefined && schema.topic === undefined) {
      configError(`${at(eventType, 'storage_policy')}: requires ${at(eventType, 'topic')}, which is missing`);
    }
  }

  // Every schema has a topic (S13: without one the topic and CloudEvents cannot be built)
  for (const [eventType, schema] of schemas) {
    if (schema.topic === undefined) {
      configError(`${at(eventType, 'topic')}: required field is missing (every event schema needs topic.base and topic.key_order)`);
    }
  }

  // B1.5 storage_policy values
  for (const [eventType, schema] of schemas) {
    const policy = schema.storage_policy;
    if (policy === undefined) continue;
    if (policy.retention_time !== undefined) {
      const where = at(eventType, 'storage_policy.retention_time');
      const seconds = parseOr(policy.retention_time, parseDuration, (reason) => configError(`${where}: ${reason}`));
      if (seconds <= 0) configError(`${where}: must be greater than 0, got '${policy.retention_time}'`);
    }
    if (policy.max_size !== undefined) {
      const where = at(eventType, 'storage_policy.max_size');
      parseOr(policy.max_size, parseSize, (reason) => configError(`${where}: ${reason}`));
    }
    if (policy.max_messages !== undefined && policy.max_messages <= 0) {
      configError(`${at(eventType, 'storage_policy.max_messages')}: must be greater than 0, got ${policy.max_messages}`);
    }
  }

  // B1.6 backend capability: in_memory supports no storage_policy field, jetstream all of them
  if (kind !== 'jetstream') {
    for (const [eventType, schema] of schemas) {
      const policy = schema.storage_policy;
      if (policy === undefined) continue;
      const field = STORAGE_POLICY_FIELDS.find((name) => policy[name] !== undefined);
      if (field !== undefined) configError(`Schema '${eventType}' storage_policy.${field} is not supported by backend '${kind}'`);
    }
  }

  // Per-schema structure (D19, docs/design/rules/schema-and-validation.md §5.9, D8)
  for (const [eventType, schema] of schemas) checkSchemaStructure(eventType, schema, warnings);
}

function asciiLower(text: string): string {
  return text.replace(/[A-Z]/g, (letter) => letter.toLowerCase());
}

function checkSchemaStructure(eventType: string, schema: EventSchemaConfig, warnings: ConfigWarning[]): void {
  const topic = schema.topic;
  const fields = Object.entries(schema.identifier);
  for (const [name, rule] of fields) {
    if (rule.type === 'PolygonHandler' && name !== 'polygon') {
      configError(
        `${at(eventType, `identifier.${name}`)}: a PolygonHandler field must be named 'polygon' (spatial filters look it up by that name)`,
      );
    }
    if (rule.type === 'PointCloudHandler' && name !== 'point_cloud') {
      configError(`${at(eventType, `identifier.${name}`)}: a PointCloudHandler field must be named 'point_cloud'`);
    }
  }
  const spatial = fields.filter(([, rule]) => isSpatial(rule)).map(([name]) => name);
  if (spatial.length > 1) {
    configError(
      `${at(eventType, 'identifier')}: at most one spatial field (PolygonHandler or PointCloudHandler) per schema, got ${spatial.join(', ')}`,
    );
  }
  const pointCloud = schema.identifier.point_cloud;
  if (pointCloud?.type === 'PointCloudHandler') {
    if (Object.hasOwn(schema.identifier, 'polygon')) {
      configError(
        `${at(eventType, 'identifier.polygon')}: a point-cloud schema must not declare a 'polygon' identifier (the name is reserved for the watch/replay filter)`,
      );
    }
    const max = pointCloud.max_points ?? MAX_POINT_CLOUD_POINTS;
    if (max < 1 || max > MAX_POINT_CLOUD_POINTS) {
      configError(
        `${at(eventType, 'identifier.point_cloud.max_points')}: field 'point_cloud' max_points must be between 1 and ${MAX_POINT_CLOUD_POINTS}, got ${max}`,
      );
    }
  }

  topic?.key_order.forEach((name, index) => {
    const rule = schema.identifier[name];
    if (rule?.type === 'PointCloudHandler') {
      configError(`${at(eventType, `topic.key_order[${index}]`)}: PointCloudHandler field '${name}' must not be listed in key_order`);
    }
    if (rule?.type === 'PolygonHandler') {
      warnings.push({
        event: WARNING_EVENTS.spatialKeyOrder,
        message: `${at(eventType, `topic.key_order[${index}]`)}: PolygonHandler field '${name}' is listed in key_order; its text goes into the subject, and watch/replay leave that position open so the geometry still decides (D19)`,
      });
    }
  });

  for (const [name, rule] of fields) {
    if ((rule.type === 'IntHandler' || rule.type === 'FloatHandler') && rule.range !== undefined) {
      const [min, max] = rule.range;
      if (min !== undefined && max !== undefined && min > max) {
        configError(`${at(eventType, `identifier.${name}.range`)}: min ${min} is greater than max ${max}`);
      }
    }
  }

  const cap = schema.max_historical_notifications;
  if (cap !== undefined && cap <= 0) {
    configError(`${at(eventType, 'max_historical_notifications')}: must be a positive integer, got ${cap}`);
  }
}

function isSpatial(rule: IdentifierRuleConfig): boolean {
  return rule.type === 'PolygonHandler' || rule.type === 'PointCloudHandler';
}
