import type { IdentifierRule } from '../identifier-rule.js';
import { createDateHandler } from './date-handler.js';
import { createEnumHandler } from './enum-handler.js';
import { createExpverHandler } from './expver-handler.js';
import type { FieldHandler } from './field-handler.js';
import { createFloatHandler } from './float-handler.js';
import { createIntHandler } from './int-handler.js';
import { createPointCloudHandler } from './point-cloud-handler.js';
import { createPolygonHandler } from './polygon-handler.js';
import { createStringHandler } from './string-handler.js';
import { createTimeHandler } from './time-handler.js';

/** The handler for one configured identifier field; the rule was validated at startup. */
export function createFieldHandler(field: string, rule: IdentifierRule): FieldHandler {
  switch (rule.type) {
    case 'StringHandler':
      return createStringHandler(field, rule);
    case 'DateHandler':
      return createDateHandler(field, rule);
    case 'TimeHandler':
      return createTimeHandler(field);
    case 'EnumHandler':
      return createEnumHandler(field, rule);
    case 'IntHandler':
      return createIntHandler(field, rule);
    case 'FloatHandler':
      return createFloatHandler(field, rule);
    case 'ExpverHandler':
      return createExpverHandler(field, rule);
    case 'PolygonHandler':
      return createPolygonHandler(field);
    case 'PointCloudHandler':
      return createPointCloudHandler(field, rule);
  }
}
