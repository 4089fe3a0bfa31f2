import { describe, expect, it } from 'vitest';
import { within } from '../../support/eventually.js';

describe('within', () => {
  it('gives the promise its value when it settles in time', async () => {
    await expect(within('answer', Promise.resolve(42), 1_000)).resolves.toBe(42);
  });

  it('fails naming the step and its context when the promise does not settle in time', async () => {
    await expect(within('answer to the dripped request', new Promise(() => undefined), 20, () => 'last: x')).rejects.toThrow(
      'no answer to the dripped request within 20 ms; last: x',
    );
  });
});
