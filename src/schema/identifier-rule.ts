import Type, { type Static } from 'typebox';

/**
 * Identifier field rules of `notification_schema.<event>.identifier.<field>` (
 * docs/design/rules/schema-and-validation.md §2.2). Each handler has its own closed object: a key it does not list is a startup error.
 * Values are strictly typed (no string → bool coercion, docs/design/rules/operations.md §1.3).
 */
const common = {
  required: Type.Boolean({ description: 'watch/replay: whether the field must be given. Notify always requires every declared field.' }),
  description: Type.Optional(Type.String({ description: 'Free text shown by the schema API.' })),
};

export const StringRule = Type.Object(
  {
    type: Type.Literal('StringHandler'),
    ...common,
    max_length: Type.Optional(Type.Integer({ minimum: 0, description: 'Maximum length in UTF-8 bytes.' })),
  },
  { additionalProperties: false },
);
export type StringRule = Static<typeof StringRule>;

export const DateRule = Type.Object(
  {
    type: Type.Literal('DateHandler'),
    ...common,
    canonical_format: Type.Optional(
      Type.Union([Type.Literal('%Y%m%d'), Type.Literal('%Y-%m-%d')], {
        default: '%Y%m%d',
        description: 'Canonical output format.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type DateRule = Static<typeof DateRule>;

const TimeRule = Type.Object({ type: Type.Literal('TimeHandler'), ...common }, { additionalProperties: false });
type TimeRule = Static<typeof TimeRule>;

export const EnumRule = Type.Object(
  {
    type: Type.Literal('EnumHandler'),
    ...common,
    values: Type.Array(Type.String(), { description: 'Allowed values, compared case-insensitively.' }),
  },
  { additionalProperties: false },
);
export type EnumRule = Static<typeof EnumRule>;

export const ExpverRule = Type.Object(
  {
    type: Type.Literal('ExpverHandler'),
    ...common,
    default: Type.Optional(Type.String({ description: 'Used when the value is the empty string.' })),
  },
  { additionalProperties: false },
);
export type ExpverRule = Static<typeof ExpverRule>;

export const IntRule = Type.Object(
  {
    type: Type.Literal('IntHandler'),
    ...common,
    range: Type.Optional(Type.Array(Type.Integer(), { minItems: 2, maxItems: 2, description: 'Inclusive [min, max].' })),
  },
  { additionalProperties: false },
);
export type IntRule = Static<typeof IntRule>;

export const FloatRule = Type.Object(
  {
    type: Type.Literal('FloatHandler'),
    ...common,
    range: Type.Optional(Type.Array(Type.Number(), { minItems: 2, maxItems: 2, description: 'Inclusive [min, max].' })),
  },
  { additionalProperties: false },
);
export type FloatRule = Static<typeof FloatRule>;

const PolygonRule = Type.Object({ type: Type.Literal('PolygonHandler'), ...common }, { additionalProperties: false });
type PolygonRule = Static<typeof PolygonRule>;

export const MAX_POINT_CLOUD_POINTS = 10_000;
export const PointCloudRule = Type.Object(
  {
    type: Type.Literal('PointCloudHandler'),
    ...common,
    max_points: Type.Optional(Type.Integer({ default: MAX_POINT_CLOUD_POINTS, description: 'Maximum points per cloud, 1 to 10000.' })),
  },
  { additionalProperties: false },
);
export type PointCloudRule = Static<typeof PointCloudRule>;

export const IDENTIFIER_RULES = {
  StringHandler: StringRule,
  DateHandler: DateRule,
  TimeHandler: TimeRule,
  EnumHandler: EnumRule,
  ExpverHandler: ExpverRule,
  IntHandler: IntRule,
  FloatHandler: FloatRule,
  PolygonHandler: PolygonRule,
  PointCloudHandler: PointCloudRule,
} as const;

export type HandlerName = keyof typeof IDENTIFIER_RULES;
export const HANDLER_NAMES = Object.keys(IDENTIFIER_RULES) as HandlerName[];

export const IdentifierRule = Type.Union([
  StringRule,
  DateRule,
  TimeRule,
  EnumRule,
  ExpverRule,
  IntRule,
  FloatRule,
  PolygonRule,
  PointCloudRule,
]);
export type IdentifierRule = Static<typeof IdentifierRule>;
