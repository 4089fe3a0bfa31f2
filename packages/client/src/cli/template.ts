import { TemplateError } from './errors.js';
import { ShellScanner } from './shell-context.js';

/**
 * The trigger template engine of the aviso client: `{{ notification.<path> }}` and
 * `{{ env.<NAME> }}`, `\{{` for a literal `{{`. Notification values are written by the
 * publisher, so they are neutralised for the place the text goes (shell-quoted in a command,
 * percent-encoded in a URL); `env` values are the operator's own and go in as written.
 */

export type Segment =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'notification'; readonly path: readonly string[] }
  | { readonly kind: 'env'; readonly name: string };

/** Where rendered text goes, which decides how notification values are neutralised. */
export type TemplateTarget = 'plain' | 'shell' | 'url';

export interface RenderResult {
  readonly text: string;
  /** Environment variables the template read, so the command trigger can withhold them. */
  readonly envRead: ReadonlySet<string>;
}

const SEGMENT = /^[^.\s{}]+$/;

export function parseTemplate(template: string, context: string): Segment[] {
  const segments: Segment[] = [];
  let text = '';
  let i = 0;
  while (i < template.length) {
    if (template.startsWith('\\{{', i)) {
      text += '{{';
      i += 3;
      continue;
    }
    if (!template.startsWith('{{', i)) {
      text += template[i];
      i += 1;
      continue;
    }
    const end = template.indexOf('}}', i + 2);
    if (end < 0) throw new TemplateError('BadSyntax', context, 'unclosed {{');
    const expression = template.slice(i + 2, end).trim();
    if (text) segments.push({ kind: 'text', text });
    text = '';
    segments.push(parseExpression(expression, context));
    i = end + 2;
  }
  if (text) segments.push({ kind: 'text', text });
  return segments;
}

function parseExpression(expression: string, context: string): Segment {
  const parts = expression.split('.');
  const [namespace, ...path] = parts;
  if (path.some((part) => !SEGMENT.test(part))) throw new TemplateError('BadSyntax', context, 'empty path segment');
  if (namespace === 'notification') return { kind: 'notification', path };
  if (namespace === 'env' && path.length === 1) return { kind: 'env', name: path[0] as string };
  throw new TemplateError('BadSyntax', context, 'unknown namespace');
}

/** JSON values render unquoted when scalar, compact JSON when structured, `null` as `null`. */
export function renderValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null) return 'null';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

function lookup(root: unknown, path: readonly string[], context: string): unknown {
  let current = root;
  for (const key of path) {
    if (current === null || typeof current !== 'object' || Array.isArray(current) || !Object.hasOwn(current, key)) {
      throw new TemplateError('Missing', context, `notification.${path.join('.')}`);
    }
    current = (current as Record<string, unknown>)[key];
  }
  if (current === undefined) throw new TemplateError('Missing', context, `notification.${path.join('.')}`);
  return current;
}

/** RFC 3986: only unreserved characters stay as they are. */
export function percentEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** True while `soFar` has not yet left the scheme and authority of a URL. */
function inUrlAuthority(soFar: string): boolean {
  const scheme = soFar.indexOf('://');
  if (scheme < 0) return true;
  return !/[/?#]/.test(soFar.slice(scheme + 3));
}

export function renderTemplate(
  template: string,
  notification: unknown,
  env: NodeJS.ProcessEnv,
  target: TemplateTarget,
  context: string,
): RenderResult {
  const envRead = new Set<string>();
  const scanner = target === 'shell' ? new ShellScanner() : undefined;
  let out = '';
  for (const segment of parseTemplate(template, context)) {
    if (segment.kind === 'text') {
      out += segment.text;
      scanner?.feed(segment.text);
      continue;
    }
    if (segment.kind === 'env') {
      const value = env[segment.name];
      if (value === undefined) throw new TemplateError('EnvNotSet', context, segment.name);
      envRead.add(segment.name);
      out += value;
      // The operator's own value may open quotes or constructs; the scanner must see it.
      scanner?.feed(value);
      continue;
    }
    const value = renderValue(lookup(notification, segment.path, context));
    if (target === 'url') {
      if (inUrlAuthority(out)) throw new TemplateError('ValueInUrlAuthority', context, `notification.${segment.path.join('.')}`);
      out += percentEncode(value);
    } else if (scanner) {
      out += scanner.quote(value, context);
    } else {
      out += value;
    }
  }
  return { text: out, envRead };
}
