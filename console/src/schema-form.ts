import { el } from './dom.js';
import type { FieldEntry } from './request-body.js';
import { formFields, isGeometry, type FieldOperator, type FormField, type SchemaView } from './schema-model.js';

const OPERATOR_LABELS: Record<FieldOperator, string> = {
  value: '=',
  eq: 'eq',
  in: 'in (a,b,…)',
  gt: 'gt',
  gte: 'gte',
  lt: 'lt',
  lte: 'lte',
  between: 'between (min,max)',
};

const PLACEHOLDERS: Partial<Record<FormField['input'], string>> = {
  polygon: '[[50,10],[52,10],[52,12],[50,12],[50,10]]',
  point: '[51, 11]',
  point_cloud: '[[51,11],[51.5,11.5]]',
};

/**
 * The identifier fields of one event type as form rows: a name with its required mark, the
 * operator (for Int, Float and Enum fields), the value, and a hint with type, range and values.
 */
export class SchemaForm {
  private rows: { field: FormField; operator: HTMLSelectElement | null; input: HTMLInputElement | HTMLTextAreaElement }[] = [];

  constructor(private readonly container: HTMLElement) {}

  render(schema: SchemaView | undefined): void {
    this.rows = [];
    if (!schema) {
      this.container.replaceChildren(el('p', { class: 'hint' }, 'This event type has no schema: the identifier is sent empty.'));
      return;
    }
    const rows = formFields(schema).map((field) => this.row(field));
    this.container.replaceChildren(...rows);
    if (rows.length === 0) this.container.append(el('p', { class: 'hint' }, 'This event type has no identifier fields.'));
  }

  values(): FieldEntry[] {
    return this.rows.map(({ field, operator, input }) => ({
      name: field.name,
      operator: (operator?.value ?? 'value') as FieldOperator,
      input: field.input,
      text: input.value,
    }));
  }

  private row(field: FormField): HTMLElement {
    const id = `field-${field.name}`;
    const input = isGeometry(field.input)
      ? el('textarea', { id, name: field.name, rows: '2', placeholder: PLACEHOLDERS[field.input] ?? '', spellcheck: 'false' })
      : el('input', {
          id,
          name: field.name,
          type: 'text',
          autocomplete: 'off',
          spellcheck: 'false',
          ...(field.values ? { list: `${id}-values` } : {}),
        });
    const operator =
      field.operators.length > 1
        ? el(
            'select',
            { class: 'operator', name: `${field.name}-operator`, 'aria-label': `${field.name} operator` },
            ...field.operators.map((op) => el('option', { value: op }, OPERATOR_LABELS[op])),
          )
        : null;
    this.rows.push({ field, operator, input });
    return el(
      'div',
      { class: 'field', 'data-field': field.name },
      el(
        'label',
        { for: id },
        field.name,
        field.required ? el('span', { class: 'required', title: 'required on watch and replay' }, '*') : null,
      ),
      el('span', { class: 'operator-cell' }, operator ?? el('span', { class: 'operator-fixed' }, '=')),
      input,
      field.values ? el('datalist', { id: `${id}-values` }, ...field.values.map((value) => el('option', { value }))) : null,
      el('small', { class: 'hint' }, field.hint, field.description ? ` — ${field.description}` : ''),
    );
  }
}
