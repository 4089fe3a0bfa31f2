/**
 * The public schema view of `GET /api/v1/schema` (docs/api.md) and what the console's form makes
 * of each identifier field. Pure: no DOM, unit-tested from test/unit/console/.
 */

export interface FieldView {
  readonly type: string;
  readonly required: boolean;
  readonly description?: string;
  readonly max_length?: number | null;
  readonly canonical_format?: string;
  readonly values?: readonly string[];
  readonly default?: string | null;
  readonly range?: readonly [number, number] | null;
  readonly max_points?: number | null;
}

export interface SchemaView {
  readonly identifier: Readonly<Record<string, FieldView>>;
  readonly payload: { readonly required: boolean } | null;
}

export interface SchemaList {
  readonly event_types: readonly string[];
  readonly schema: Readonly<Record<string, SchemaView>>;
  readonly message?: string;
}

/** Constraint operators of docs/design/rules/schema-and-validation.md §8.4, in the order the form offers them. */
export const NUMBER_OPERATORS = ['eq', 'in', 'gt', 'gte', 'lt', 'lte', 'between'] as const;
export const ENUM_OPERATORS = ['eq', 'in'] as const;
export type Operator = (typeof NUMBER_OPERATORS)[number];

/** `value` is a plain scalar (an implicit `eq` on watch/replay, the value itself on notify). */
export type FieldOperator = 'value' | Operator;

/** How a field is entered: the geometry fields take `[[lat,lon],…]` text, the others one value. */
export type FieldInput = 'text' | 'enum' | 'number' | 'polygon' | 'point' | 'point_cloud';

/** Whether a field takes geometry: a `[[lat,lon],…]` text area, sent as an array when typed as one. */
export function isGeometry(input: FieldInput): boolean {
  return input === 'polygon' || input === 'point' || input === 'point_cloud';
}

export interface FormField {
  readonly name: string;
  readonly input: FieldInput;
  readonly required: boolean;
  readonly operators: readonly FieldOperator[];
  /** A one-line hint: type, range, values, format. */
  readonly hint: string;
  readonly values?: readonly string[];
  readonly description?: string;
}

/**
 * The form fields of one schema, in alphabetical order (the order the server validates in). A
 * schema with a `polygon` field also gets a `point` filter (watch/replay only), which satisfies
 * a required polygon (docs/streaming.md), so it is never marked required; one with a
 * `point_cloud` field gets the `polygon` filter that selects point clouds.
 */
export function formFields(schema: SchemaView): FormField[] {
  const fields: FormField[] = [];
  for (const name of Object.keys(schema.identifier).sort()) {
    const view = schema.identifier[name]!;
    fields.push({
      name,
      input: inputOf(name, view),
      required: view.required,
      operators: operatorsOf(view.type),
      hint: hintOf(view),
      ...(view.values ? { values: view.values } : {}),
      ...(view.description ? { description: view.description } : {}),
    });
    if (view.type === 'PolygonHandler') {
      fields.push({
        name: 'point',
        input: 'point',
        required: false,
        operators: ['value'],
        hint: '[lat, lon] · watch/replay only, instead of polygon',
      });
    }
    if (view.type === 'PointCloudHandler') {
      // Point clouds are selected with a polygon; `point_cloud` itself is notify only.
      fields.push({
        name: 'polygon',
        input: 'polygon',
        required: false,
        operators: ['value'],
        hint: '[[lat,lon],…] · watch/replay only: clouds with a point inside',
      });
    }
  }
  return fields;
}

function inputOf(name: string, view: FieldView): FieldInput {
  switch (view.type) {
    case 'EnumHandler':
      return 'enum';
    case 'IntHandler':
    case 'FloatHandler':
      return 'number';
    case 'PolygonHandler':
      return 'polygon';
    case 'PointCloudHandler':
      return 'point_cloud';
    default:
      return name === 'point' ? 'point' : 'text';
  }
}

function operatorsOf(type: string): readonly FieldOperator[] {
  if (type === 'IntHandler' || type === 'FloatHandler') return ['value', ...NUMBER_OPERATORS];
  if (type === 'EnumHandler') return ['value', ...ENUM_OPERATORS];
  return ['value'];
}

function hintOf(view: FieldView): string {
  const type = view.type.replace(/Handler$/, '');
  const parts = [type];
  if (view.range) parts.push(`range [${view.range[0]}, ${view.range[1]}]`);
  if (view.max_length != null) parts.push(`max ${view.max_length} bytes`);
  if (view.canonical_format) parts.push(`canonical ${view.canonical_format}`);
  if (view.default != null) parts.push(`default ${JSON.stringify(view.default)}`);
  if (view.values) parts.push(`one of ${view.values.join(', ')}`);
  if (view.type === 'PolygonHandler') parts.push('[[lat,lon],…], closed, ≥ 4 pairs');
  if (view.type === 'PointCloudHandler')
    parts.push(`[[lat,lon],…]${view.max_points != null ? `, ≤ ${view.max_points} points` : ''}; notify only`);
  return parts.join(' · ');
}
