import { rootCertificates } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { connectOptions } from '../../src/transport/default-fetch.js';

describe('TLS trust of the client in Node', () => {
  it('adds extra CAs to the default roots instead of replacing them', async () => {
    const options = await connectOptions({ ca: ['PEM-A', 'PEM-B'] });
    expect(options.ca).toEqual([...rootCertificates, 'PEM-A', 'PEM-B']);
    expect(options.rejectUnauthorized).toBeUndefined();
    expect((await connectOptions({ ca: 'ONE' })).ca?.at(-1)).toBe('ONE');
  });
  it('leaves the defaults alone without extra CAs, and switches checks off only when asked', async () => {
    expect(await connectOptions({})).toEqual({});
    expect(await connectOptions({ dangerAcceptInvalidCerts: true })).toEqual({ rejectUnauthorized: false });
  });
});
