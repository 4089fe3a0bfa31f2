/**
 * The merged configuration document between the file/env cascade (`load.ts`) and the
 * schema-driven coercer (`conform.ts`): its mappings, the values the environment set, and the
 * one error either stage raises.
 */

export class ConfigLoadError extends Error {
  constructor(message: string) {
    // One line, always: it is printed as is on stderr before the logger exists (D17).
    super(message.replace(/\s*[\r\n]+\s*/g, ' ').trim());
    this.name = 'ConfigLoadError';
  }
}

export type Mapping = { [key: string]: unknown };

/** A value set through the environment: typed only once its target field is known. */
export class EnvValue {
  constructor(
    readonly text: string,
    readonly variable: string,
  ) {}
}

export function isMapping(value: unknown): value is Mapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof EnvValue);
}

/** Defines an own property even for keys like `__proto__`, which a plain assignment would not. */
export function setOwn(target: Mapping, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** How a bad value is quoted in a message: short, one line, never the whole structure. */
export function show(value: unknown): string {
  if (value instanceof EnvValue) return `${quote(value.text)} (from ${value.variable})`;
  if (typeof value === 'string') return quote(value);
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a number or boolean is all that is left (YAML makes no symbol or function), and its text is the String()
  return String(value);
}

export function quote(text: string): string {
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
}
