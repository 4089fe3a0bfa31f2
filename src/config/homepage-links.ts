import type { HomepageConfig } from './model.js';

/** The `application.homepage` keys in the order they are checked and shown. */
export const HOMEPAGE_KEYS = [
  'client_documentation_url',
  'client_repository_url',
  'server_documentation_url',
  'server_repository_url',
] as const satisfies readonly (keyof HomepageConfig)[];

/**
 * The startup check of D29 (docs/design/rules/reference-0.13.md §5): each homepage link must be an absolute
 * `http`/`https` URL with a host and no user info, so the page can only ever link to a web page
 * (never `javascript:` or `data:`) and never shows a credential. The value is not echoed in the
 * message: a URL with user info is exactly what must not reach the logs.
 *
 * Returns the message for the first bad key, or undefined when all are good.
 */
export function homepageLinkProblem(homepage: HomepageConfig): string | undefined {
  const bad = HOMEPAGE_KEYS.find((key) => !isWebLink(homepage[key]));
  return bad === undefined
    ? undefined
    : `application.homepage.${bad} must be an absolute HTTP(S) URL with a host and no embedded credentials`;
}

function isWebLink(text: string): boolean {
  const url = parseWebUrl(text);
  return url !== undefined && url.hostname !== '';
}

/**
 * An http(s) URL without embedded credentials, or undefined. The URL parser silently drops tabs
 * and line breaks and trims spaces: a value holding any of them is not the URL it looks like, so
 * it is refused rather than repaired.
 */
export function parseWebUrl(text: string): URL | undefined {
  if (/[\s\p{Cc}]/u.test(text)) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  return url.username === '' && url.password === '' ? url : undefined;
}
