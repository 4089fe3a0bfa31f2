import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';

/**
 * Debian's `chromium`, driven by `playwright-core` (which downloads no browser of its own), for the
 * tests that need a real browser. Without `/usr/bin/chromium` they fail, they are never skipped:
 * install it with `apt-get install chromium` or run `npm test` as root, which installs it.
 */
export const CHROMIUM = '/usr/bin/chromium';

export async function launchChromium(extraArgs: readonly string[] = []): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: these tests need Debian's chromium. Install it with ` +
        '`apt-get update && apt-get install -y chromium`, or run `npm test` as root, which installs it.',
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extraArgs,
    ],
  });
}

/** What went wrong while a page ran: console errors, uncaught exceptions, failed requests. */
export interface PageProblems {
  readonly consoleErrors: string[];
  readonly pageErrors: string[];
  readonly failedRequests: string[];
  readonly badResponses: string[];
  readonly foreignRequests: string[];
}

/**
 * Collects a page's problems from now on. `origin` is the one origin the page may talk to;
 * `expectedStatuses` lists responses ≥ 400 a test provokes on purpose (e.g. a 400 it displays).
 */
export function watchPage(page: Page, origin: string, expectedStatuses: readonly number[] = []): PageProblems {
  const problems: PageProblems = { consoleErrors: [], pageErrors: [], failedRequests: [], badResponses: [], foreignRequests: [] };
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    // Chromium logs every response >= 400 it loads; the ones provoked on purpose are expected.
    const loadFailure = /^Failed to load resource: the server responded with a status of (\d+) /.exec(message.text());
    if (loadFailure && expectedStatuses.includes(Number(loadFailure[1]))) return;
    problems.consoleErrors.push(`${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => problems.pageErrors.push(error.message));
  page.on('requestfailed', (request) => problems.failedRequests.push(`${request.url()}: ${request.failure()?.errorText ?? '?'}`));
  page.on('response', (response) => {
    if (response.status() >= 400 && !expectedStatuses.includes(response.status())) {
      problems.badResponses.push(`${response.status()} ${response.url()}`);
    }
  });
  page.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(origin) && !url.startsWith('data:')) problems.foreignRequests.push(url);
  });
  return problems;
}

export function expectNoProblems(problems: PageProblems): void {
  expect(problems).toEqual({ consoleErrors: [], pageErrors: [], failedRequests: [], badResponses: [], foreignRequests: [] });
}
