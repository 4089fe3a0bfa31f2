import { isGeometry, type FieldInput, type FieldOperator } from './schema-model.js';

/**
 * What the console's form holds, turned into the JSON bodies of notify, watch and replay
 * (docs/api.md). Pure: no DOM. The console never validates values itself: whatever the operator
 * types is sent as typed, so the server's own 400 message is the one shown.
 */

export interface FieldEntry {
  readonly name: string;
  readonly operator: FieldOperator;
  /** How it is entered (schema-model.ts): geometry typed as a JSON array is sent as that array. */
  readonly input: FieldInput;
  /** As typed; an empty entry is left out of the identifier. */
  readonly text: string;
}

export type StartKind = 'live' | 'from_id' | 'from_date';
export type EndKind = 'none' | 'to_id' | 'to_date';

export interface ConsoleForm {
  readonly eventType: string;
  readonly fields: readonly FieldEntry[];
  readonly start: StartKind;
  readonly startValue: string;
  /** Replay only; watch ignores it. */
  readonly end: EndKind;
  readonly endValue: string;
  /** Notify only: JSON text, or plain text sent as a JSON string; empty means no payload. */
  readonly payload: string;
}

export type StreamEndpoint = 'watch' | 'replay';
export type Operation = StreamEndpoint | 'notify';

export type RequestBody = Record<string, unknown>;

/** The body of `POST /api/v1/watch` or `/api/v1/replay`. */
export function streamBody(form: ConsoleForm, endpoint: StreamEndpoint): RequestBody {
  const body: RequestBody = { event_type: form.eventType, identifier: identifierOf(form.fields, 'stream') };
  if (form.start === 'from_id') body.from_id = form.startValue.trim();
  if (form.start === 'from_date') body.from_date = form.startValue.trim();
  if (endpoint === 'replay' && form.end !== 'none') body[form.end] = form.endValue.trim();
  return body;
}

/** The body of `POST /api/v1/notification`. */
export function notifyBody(form: ConsoleForm): RequestBody {
  const body: RequestBody = { event_type: form.eventType, identifier: identifierOf(form.fields, 'notify') };
  if (form.payload.trim() !== '') body.payload = jsonOrText(form.payload);
  return body;
}

export function bodyFor(form: ConsoleForm, operation: Operation): RequestBody {
  return operation === 'notify' ? notifyBody(form) : streamBody(form, operation);
}

function identifierOf(fields: readonly FieldEntry[], use: 'stream' | 'notify'): Record<string, unknown> {
  const identifier: Record<string, unknown> = {};
  for (const field of fields) {
    const text = field.text.trim();
    if (text === '') continue;
    // `point` is a watch/replay filter only: notify never gets it from the form.
    if (use === 'notify' && field.name === 'point') continue;
    identifier[field.name] = field.operator === 'value' ? scalarOf(field.input, text) : constraintOf(field.operator, text);
  }
  return identifier;
}

/** A scalar goes as the text typed; geometry typed as a JSON array goes as that array. */
function scalarOf(input: FieldInput, text: string): unknown {
  if (isGeometry(input) && text.startsWith('[')) {
    const parsed = parseJson(text);
    if (Array.isArray(parsed)) return parsed;
  }
  return text;
}

/**
 * `{"<op>": operand}`: `in` takes a comma-separated list, `between` two values. A number-looking
 * operand becomes a JSON number (Int/Float constraints need one), anything else stays text (enum
 * values; or a typo, which the server then names).
 */
function constraintOf(operator: Exclude<FieldOperator, 'value'>, text: string): Record<string, unknown> {
  if (operator === 'in' || operator === 'between') {
    const items = text.split(',').map((item) => operandOf(item.trim()));
    return { [operator]: items };
  }
  return { [operator]: operandOf(text) };
}

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

function operandOf(text: string): unknown {
  return NUMBER.test(text) ? Number(text) : text;
}

function jsonOrText(text: string): unknown {
  const parsed = parseJson(text);
  return parsed === undefined ? text : parsed;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
