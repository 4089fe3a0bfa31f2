import Value from 'typebox/value';
import { ConfigLoadError, EnvValue, isMapping, quote, setOwn, show, type Mapping } from './config-document.js';
import { AppConfigSchema, type AppConfig } from './model.js';
import type { SchemaNode } from './schema-node.js';

/**
 * The schema-driven coercer of stage A: checks every value of the merged document against the
 * TypeBox model while coercing it where the section is lenient and filling defaults.
 *
 * The checking is a small walker over the model's JSON Schema rather than `Value.Errors`:
 * the spec wants one line naming the field and the rule ("application.port: must be an integer
 * between 0 and 65535, got 70000"), lenient coercion that TypeBox's `Value.Convert` does not
 * offer (`yes`/`on` booleans, text for numbers), coercion that depends on where a value came
 * from (env values are coerced inside `notification_schema`, YAML values are not), and
 * identifier rules dispatched on `type` instead of union noise. It also fills defaults,
 * because `Value.Default` does not descend into unions (identifier rules carry defaults).
 * The result is finally asserted with `Value.Check` against the same model.
 *
 * JS numbers: integers beyond Number.MAX_SAFE_INTEGER (YAML literals are read as doubles) are
 * rejected as out of range instead of being silently rounded. The spec's 64-bit fields
 * (`max_messages`, `max_bytes`, durations, sizes) therefore stop at 2^53 − 1.
 */

/**
 * `lenient`: the settings sections, where YAML scalars are coerced like env values (docs/design/rules/operations.md §1.2).
 * `strict`: inside `notification_schema`, where only env values are coerced (docs/design/rules/operations.md §1.3).
 */
type Mode = 'lenient' | 'strict';

const STRICT_SECTIONS: ReadonlySet<string> = new Set(['notification_schema']);

const TRUE_WORDS: ReadonlySet<string> = new Set(['true', 'yes', 'on', '1']);
const FALSE_WORDS: ReadonlySet<string> = new Set(['false', 'no', 'off', '0']);
const INTEGER_TEXT = /^[+-]?[0-9]+$/;
const NUMBER_TEXT = /^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$/;

export function conformConfig(document: Mapping): AppConfig {
  const root = AppConfigSchema as unknown as SchemaNode;
  const result = conform(root, document, '', 'lenient');
  if (!Value.Check(AppConfigSchema, result)) {
    // Unreachable unless the walker and the model disagree; still report a field, not a stack.
    const [first] = Value.Errors(AppConfigSchema, result);
    const where = first === undefined ? 'configuration' : first.instancePath.slice(1).replaceAll('/', '.') || 'configuration';
    throw new ConfigLoadError(`${where}: ${first?.message ?? 'does not match the configuration model'}`);
  }
  return result;
}

function fail(where: string, rule: string): never {
  throw new ConfigLoadError(`${where === '' ? 'configuration' : where}: ${rule}`);
}

function child(where: string, key: string): string {
  return where === '' ? key : `${where}.${key}`;
}

function conform(node: SchemaNode, value: unknown, where: string, mode: Mode): unknown {
  if (node.anyOf !== undefined) {
    const literals = node.anyOf.map((member) => member.const);
    if (literals.every((literal) => typeof literal === 'string')) return conformEnum(literals, value, where, mode);
    const tagged = taggedMembers(node.anyOf);
    if (tagged !== undefined) return conformTagged(tagged, value, where, mode);
    const counted = countOrKeywords(node.anyOf);
    if (counted !== undefined) return conformCountOrKeyword(counted.integer, counted.keywords, value, where, mode);
    throw new Error(`config model: unsupported union at ${where}`);
  }
  if (node.enum !== undefined) return conformEnum(node.enum, value, where, mode);
  switch (node.type) {
    case 'object':
      return conformObject(node, value, where, mode);
    case 'array':
      return conformArray(node, value, where, mode);
    case 'integer':
      return conformInteger(node, value, where, mode);
    case 'number':
      return conformNumber(node, value, where, mode);
    case 'boolean':
      return conformBoolean(value, where, mode);
    case 'string':
      return conformString(value, where, mode);
    default:
      throw new Error(`config model: unsupported schema at ${where}`);
  }
}

/** A list or mapping given through the environment may be written as a JSON literal (docs/design/rules/operations.md §1.2, optional). */
function fromEnvJson(value: EnvValue, expected: 'a mapping' | 'a list', where: string): unknown {
  const text = value.text.trim();
  if (text.startsWith('{') || text.startsWith('[')) {
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      fail(
        where,
        `must be ${expected}, got ${show(value)} which is not valid JSON (${error instanceof Error ? error.message : 'parse error'})`,
      );
    }
  }
  fail(where, `must be ${expected} (from the environment, a JSON literal), got ${show(value)}`);
}

function conformObject(node: SchemaNode, input: unknown, where: string, mode: Mode): Mapping {
  const value = input instanceof EnvValue ? fromEnvJson(input, 'a mapping', where) : input;
  if (!isMapping(value)) fail(where, `must be a mapping, got ${show(value)}`);
  const properties = node.properties ?? {};
  // A declared field written as a YAML null (`port:`) counts as absent, as in the reference.
  const present = new Map(
    Object.entries(value).filter(([key, item]) => !(Object.hasOwn(properties, key) && (item === null || item === undefined))),
  );

  if (node.additionalProperties === false) {
    const unknown = [...present.keys()].filter((key) => !Object.hasOwn(properties, key));
    if (unknown.length > 0) fail(where, `unknown field(s): ${unknown.join(', ')}`);
  }
  for (const key of node.required ?? []) {
    if (!present.has(key) && properties[key]?.default === undefined) fail(child(where, key), 'required field is missing');
  }

  const result: Mapping = {};
  for (const [key, property] of Object.entries(properties)) {
    const childMode: Mode = where === '' && STRICT_SECTIONS.has(key) ? 'strict' : mode;
    if (present.has(key)) {
      setOwn(result, key, conform(property, present.get(key), child(where, key), childMode));
    } else if (property.default !== undefined) {
      setOwn(result, key, conform(property, structuredClone(property.default), child(where, key), childMode));
    }
  }
  const entryNode = node.patternProperties === undefined ? undefined : Object.values(node.patternProperties)[0];
  if (entryNode !== undefined) {
    for (const [key, item] of present) {
      if (!Object.hasOwn(properties, key)) setOwn(result, key, conform(entryNode, item, child(where, key), mode));
    }
  }
  return result;
}

/** Members of a union discriminated by a literal `type` property (the identifier rules). */
function taggedMembers(members: readonly SchemaNode[]): Map<string, SchemaNode> | undefined {
  const tagged = new Map<string, SchemaNode>();
  for (const member of members) {
    const tag = member.properties?.type?.const;
    if (member.type !== 'object' || typeof tag !== 'string') return undefined;
    tagged.set(tag, member);
  }
  return tagged;
}

function conformTagged(members: Map<string, SchemaNode>, input: unknown, where: string, mode: Mode): Mapping {
  const value = input instanceof EnvValue ? fromEnvJson(input, 'a mapping', where) : input;
  if (!isMapping(value)) fail(where, `must be a mapping, got ${show(value)}`);
  const known = [...members.keys()].join(', ');
  const tag = value.type;
  if (tag === undefined || tag === null) fail(child(where, 'type'), `required field is missing (one of ${known})`);
  const name = tag instanceof EnvValue ? tag.text : tag;
  if (typeof name !== 'string') fail(child(where, 'type'), `must be a string, got ${show(tag)}`);
  const member = members.get(name);
  if (member === undefined) fail(child(where, 'type'), `unknown type ${quote(name)}; expected one of ${known}`);
  return conformObject(member, value, where, mode);
}

function conformArray(node: SchemaNode, input: unknown, where: string, mode: Mode): unknown[] {
  const value = input instanceof EnvValue ? fromEnvJson(input, 'a list', where) : input;
  if (!Array.isArray(value)) fail(where, `must be a list, got ${show(value)}`);
  const { minItems, maxItems } = node;
  if (minItems !== undefined && minItems === maxItems && value.length !== minItems) {
    fail(where, `must be a list of exactly ${minItems} items, got ${value.length}`);
  }
  if (minItems !== undefined && value.length < minItems) fail(where, `must have at least ${minItems} items, got ${value.length}`);
  if (maxItems !== undefined && value.length > maxItems) fail(where, `must have at most ${maxItems} items, got ${value.length}`);
  const items = node.items;
  if (items === undefined) return [...(value as unknown[])];
  return value.map((item: unknown, index) => conform(items, item, `${where}[${index}]`, mode));
}

/** The scalar to coerce and whether coercion applies: env values always, YAML only in lenient sections. */
function scalar(value: unknown, mode: Mode): { raw: unknown; lenient: boolean } {
  return value instanceof EnvValue ? { raw: value.text, lenient: true } : { raw: value, lenient: mode === 'lenient' };
}

function describeInteger(node: SchemaNode): string {
  const { minimum, maximum } = node;
  if (minimum !== undefined && maximum !== undefined) return `an integer between ${minimum} and ${maximum}`;
  if (minimum === 0) return 'a non-negative integer';
  if (minimum !== undefined) return `an integer >= ${minimum}`;
  if (maximum !== undefined) return `an integer <= ${maximum}`;
  return 'an integer';
}

function conformInteger(node: SchemaNode, value: unknown, where: string, mode: Mode): number {
  const { raw, lenient } = scalar(value, mode);
  let number: number | undefined;
  if (typeof raw === 'number') number = raw;
  else if (lenient && typeof raw === 'string' && INTEGER_TEXT.test(raw)) number = Number(raw);
  const rule = describeInteger(node);
  if (number === undefined || !Number.isInteger(number)) fail(where, `must be ${rule}, got ${show(value)}`);
  if (!Number.isSafeInteger(number)) {
    fail(where, `must be ${rule} (at most ${Number.MAX_SAFE_INTEGER} in magnitude is supported), got ${show(value)}`);
  }
  if ((node.minimum !== undefined && number < node.minimum) || (node.maximum !== undefined && number > node.maximum)) {
    fail(where, `must be ${rule}, got ${show(value)}`);
  }
  return number === 0 ? 0 : number; // "-0" reads as -0
}

/** A union of one integer and string literals (`application.workers`: a count or `auto`). */
function countOrKeywords(members: readonly SchemaNode[]): { integer: SchemaNode; keywords: string[] } | undefined {
  const integers = members.filter((member) => member.type === 'integer');
  const keywords = members.flatMap((member) => (typeof member.const === 'string' ? [member.const] : []));
  const [integer] = integers;
  if (integer === undefined || integers.length !== 1 || keywords.length !== members.length - 1) return undefined;
  return { integer, keywords };
}

function conformCountOrKeyword(
  integer: SchemaNode,
  keywords: readonly string[],
  value: unknown,
  where: string,
  mode: Mode,
): number | string {
  const { raw } = scalar(value, mode);
  if (typeof raw === 'string' && keywords.includes(raw)) return raw;
  try {
    return conformInteger(integer, value, where, mode);
  } catch (error) {
    if (!(error instanceof ConfigLoadError)) throw error;
    fail(where, `must be ${describeInteger(integer)} or ${keywords.map(quote).join(' or ')}, got ${show(value)}`);
  }
}

function conformNumber(node: SchemaNode, value: unknown, where: string, mode: Mode): number {
  const { raw, lenient } = scalar(value, mode);
  let number: number | undefined;
  if (typeof raw === 'number') number = raw;
  else if (lenient && typeof raw === 'string' && NUMBER_TEXT.test(raw)) number = Number(raw);
  if (number === undefined || !Number.isFinite(number)) fail(where, `must be a finite number, got ${show(value)}`);
  if ((node.minimum !== undefined && number < node.minimum) || (node.maximum !== undefined && number > node.maximum)) {
    fail(where, `must be a number between ${node.minimum ?? '-∞'} and ${node.maximum ?? '∞'}, got ${show(value)}`);
  }
  return number;
}

function conformBoolean(value: unknown, where: string, mode: Mode): boolean {
  const { raw, lenient } = scalar(value, mode);
  if (typeof raw === 'boolean') return raw;
  if (lenient) {
    const word = typeof raw === 'number' || typeof raw === 'string' ? String(raw).toLowerCase() : undefined;
    if (word !== undefined && TRUE_WORDS.has(word)) return true;
    if (word !== undefined && FALSE_WORDS.has(word)) return false;
    fail(where, `must be a boolean (true/false, yes/no, on/off or 1/0), got ${show(value)}`);
  }
  fail(where, `must be a boolean (true or false), got ${show(value)}`);
}

function conformString(value: unknown, where: string, mode: Mode): string {
  const { raw, lenient } = scalar(value, mode);
  if (typeof raw === 'string') return raw;
  if (lenient && (typeof raw === 'number' || typeof raw === 'boolean')) return String(raw);
  fail(where, `must be a string, got ${show(value)}${typeof raw === 'number' || typeof raw === 'boolean' ? ' (quote it in YAML)' : ''}`);
}

function conformEnum(values: readonly unknown[], value: unknown, where: string, mode: Mode): string {
  const { raw, lenient } = scalar(value, mode);
  const text = typeof raw === 'string' ? raw : lenient && typeof raw === 'number' ? String(raw) : undefined;
  const allowed = values.map(String);
  if (text === undefined || !allowed.includes(text)) fail(where, `must be one of ${allowed.join(', ')}, got ${show(value)}`);
  return text;
}
