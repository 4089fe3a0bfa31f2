import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boundedGet, createHttpAgents, ExchangeError } from '../../../../src/auth/ecpds/bounded-get.js';
import { basicAuthorization } from '../../../../src/auth/ecpds/destination-client.js';
import { ECPDS_SERVICE_ACCOUNT, FakeEcpds } from '../../../support/fake-ecpds.js';
import { findFreePort } from '../../../support/ports.js';

const fake = new FakeEcpds();
const agents = createHttpAgents();
const headers = { authorization: basicAuthorization(ECPDS_SERVICE_ACCOUNT.username, ECPDS_SERVICE_ACCOUNT.password) };
const options = { headers, connectTimeoutMs: 1_000, totalTimeoutMs: 5_000, maxBodyBytes: 1_000, agents };

beforeAll(async () => {
  await fake.start();
});
afterAll(async () => {
  agents.http.destroy();
  agents.https.destroy();
  await fake.stop();
});

describe('boundedGet', () => {
  it('returns the status and the whole body', async () => {
    fake.behaviour = { kind: 'body', body: 'hello' };
    const response = await boundedGet(new URL(`${fake.url}/ecpds/v1/destination/list?id=x`), options);
    expect(response).toEqual({ status: 200, body: 'hello' });
  });

  it('does not buffer a body over the limit', async () => {
    fake.behaviour = { kind: 'body', body: 'x'.repeat(5_000) };
    const response = await boundedGet(new URL(`${fake.url}/ecpds/v1/destination/list?id=x`), options);
    expect(response).toEqual({ status: 200, body: undefined });
  });

  it('rejects with a network ExchangeError when the connection is refused', async () => {
    const port = await findFreePort();
    const failure = boundedGet(new URL(`http://127.0.0.1:${port}/`), options);
    await expect(failure).rejects.toBeInstanceOf(ExchangeError);
    await expect(failure).rejects.toMatchObject({ failure: 'network' });
  });
});
