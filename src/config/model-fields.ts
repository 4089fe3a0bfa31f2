import Type from 'typebox';

/** Field builders every section of the model uses. */

export const unsigned = (description: string, defaultValue?: number) =>
  Type.Integer(defaultValue === undefined ? { minimum: 0, description } : { minimum: 0, default: defaultValue, description });

export const port = (description: string) => Type.Integer({ minimum: 0, maximum: 65535, description });

/** Realm name → role names (docs/design/rules/operations.md §2.6). `"*"` grants every role of that realm. */
export const RoleMap = (description: string) => Type.Record(Type.String(), Type.Array(Type.String()), { description });
