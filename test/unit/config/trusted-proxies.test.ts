import { afterAll, describe, expect, it } from 'vitest';
import { ConfigValidationError, validateConfig } from '../../../src/config/validate.js';
import { trustedProxiesProblem } from '../../../src/config/trusted-proxies.js';
import { loadDoc, removeSandboxes } from './config-fixture.js';
import { thrownError } from '../../support/thrown-error.js';

afterAll(removeSandboxes);

/** `application.trusted_proxies` (D49): addresses and networks, checked at startup. */

describe('application.trusted_proxies', () => {
  it('is empty by default', () => {
    expect(loadDoc({}).application.trusted_proxies).toEqual([]);
  });

  it('accepts IPv4 and IPv6 addresses and networks', () => {
    expect(
      trustedProxiesProblem(['10.0.0.7', '10.0.0.0/8', '0.0.0.0/0', '::1', 'fd00::/8', '::/0', '192.168.1.1/32', '2001:db8::1/128']),
    ).toBeUndefined();
    expect(() => validateConfig(loadDoc({ application: { trusted_proxies: ['127.0.0.1', '::1'] } }))).not.toThrow();
  });

  it.each([
    ['localhost'],
    ['10.0.0.0/33'],
    ['fd00::/129'],
    ['10.0.0.0/'],
    ['10.0.0/8'],
    ['10.0.0.0/8/8'],
    ['10.0.0.0/x'],
    [''],
    [' 10.0.0.1'],
  ])('refuses %j at startup, naming the entry', (entry) => {
    const error = thrownError(
      () => validateConfig(loadDoc({ application: { trusted_proxies: ['10.0.0.1', entry] } })),
      ConfigValidationError,
    );
    expect(error.message).toBe(
      `application.trusted_proxies[1]: ${JSON.stringify(entry)} is not an IP address or network: write e.g. "10.0.0.7", "10.0.0.0/8" or "fd00::/8"`,
    );
  });
});
