import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { basicAuthorization, DestinationClient, destinationListUrl, displayServer } from '../../../../src/auth/ecpds/destination-client.js';
import { ECPDS_SERVICE_ACCOUNT, FakeEcpds } from '../../../support/fake-ecpds.js';
import { clientSettings, silentLogger } from './ecpds-fixtures.js';

describe('destinationListUrl', () => {
  it('appends the list path to a path prefix with a trailing slash without doubling it', () => {
    expect(destinationListUrl('https://proxy.example/ecpds-api/', 'alice').href).toBe(
      'https://proxy.example/ecpds-api/ecpds/v1/destination/list?id=alice',
    );
  });

  it('appends the list path to a path prefix without a trailing slash', () => {
    expect(destinationListUrl('https://proxy.example/ecpds-api', 'alice').href).toBe(
      'https://proxy.example/ecpds-api/ecpds/v1/destination/list?id=alice',
    );
  });

  it('appends the list path to a bare host', () => {
    expect(destinationListUrl('https://ecpds.example:8443', 'alice').href).toBe(
      'https://ecpds.example:8443/ecpds/v1/destination/list?id=alice',
    );
  });

  it.each([
    ['a b', 'a+b'],
    ['a+b', 'a%2Bb'],
    ['a&b', 'a%26b'],
    ['a=b#c?d/e%f', 'a%3Db%23c%3Fd%2Fe%25f'],
    ['jörg', 'j%C3%B6rg'],
    ['a.b-c_d*e', 'a.b-c_d*e'],
  ])('form-encodes the id %j as %s', (username, encoded) => {
    expect(destinationListUrl('https://ecpds.example', username).search).toBe(`?id=${encoded}`);
  });

  it('drops user info from the configured server', () => {
    expect(destinationListUrl('https://someone:secret@ecpds.example/api', 'alice').href).toBe(
      'https://ecpds.example/api/ecpds/v1/destination/list?id=alice',
    );
  });
});

describe('displayServer', () => {
  it('redacts user info and keeps everything else', () => {
    expect(displayServer('https://someone:secret@ecpds.example/api')).toBe('https://[REDACTED]@ecpds.example/api');
    expect(displayServer('https://ecpds.example/a@b')).toBe('https://ecpds.example/a@b');
  });
});

describe('the request ECPDS receives', () => {
  const fake = new FakeEcpds({ pathPrefix: '/ecpds-api' });
  const clients: DestinationClient[] = [];
  const client = (server: string): DestinationClient => {
    const created = new DestinationClient(clientSettings([server]));
    clients.push(created);
    return created;
  };

  beforeAll(async () => {
    await fake.start();
  });
  afterEach(() => {
    for (const created of clients.splice(0)) created.close();
    fake.reset();
  });
  afterAll(async () => {
    await fake.stop();
  });

  it.each(['/ecpds-api/', '/ecpds-api'])('is the list path under the prefix %s with the id form-encoded', async (prefix) => {
    const fetched = await client(`${fake.url}${prefix}`).fetch('ecpds-user a+b&c', silentLogger);

    expect(fake.requests.map((request) => request.rawUrl)).toEqual(['/ecpds-api/ecpds/v1/destination/list?id=ecpds-user+a%2Bb%26c']);
    expect(fake.callsFor('ecpds-user a+b&c')).toBe(1);
    expect(fetched).toEqual({ ok: true, outcome: 'success', destinations: new Set(['CIP', 'FOO']) });
  });

  it('carries Basic credentials of the service account', async () => {
    await client(`${fake.url}/ecpds-api`).fetch('alice', silentLogger);

    const expected = `Basic ${Buffer.from(`${ECPDS_SERVICE_ACCOUNT.username}:${ECPDS_SERVICE_ACCOUNT.password}`).toString('base64')}`;
    expect(basicAuthorization(ECPDS_SERVICE_ACCOUNT.username, ECPDS_SERVICE_ACCOUNT.password)).toBe(expected);
    expect(fake.requests.map((request) => request.authorization)).toEqual([expected]);
  });
});
