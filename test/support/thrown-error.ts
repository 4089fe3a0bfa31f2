import { expect } from 'vitest';

/** The error of class `type` that `action` throws; fails the test when it throws nothing or something else. */
export function thrownError<E extends Error>(action: () => unknown, type: abstract new (...args: never[]) => E): E {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(type);
    return error as E;
  }
  throw new Error(`expected ${type.name} to be thrown, but nothing was`);
}
