import { isIP } from 'node:net';

/**
 * The startup check of `application.trusted_proxies` (D49): each entry an IPv4 or IPv6 address,
 * or one with a prefix length (`10.0.0.0/8`). A malformed entry would otherwise fail deep inside
 * the HTTP server's setup, or worse, trust nothing while the operator believes it does.
 *
 * Returns the message for the first bad entry, or undefined when all are good.
 */
export function trustedProxiesProblem(proxies: readonly string[]): string | undefined {
  for (const [index, entry] of proxies.entries()) {
    const slash = entry.indexOf('/');
    const address = slash < 0 ? entry : entry.slice(0, slash);
    const version = isIP(address);
    const prefix = slash < 0 ? undefined : entry.slice(slash + 1);
    const maxPrefix = version === 6 ? 128 : 32;
    const prefixOk = prefix === undefined || (/^[0-9]{1,3}$/.test(prefix) && Number(prefix) <= maxPrefix);
    if (version !== 0 && prefixOk) continue;
    return `application.trusted_proxies[${index}]: ${JSON.stringify(entry)} is not an IP address or network: write e.g. "10.0.0.7", "10.0.0.0/8" or "fd00::/8"`;
  }
  return undefined;
}
