import { expect } from 'vitest';
import { StartCursorError } from '../../src/http/request-range.js';

/** The message of the `StartCursorError` that `action` throws; fails the test when it throws nothing or something else. */
export function startCursorMessageOf(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(StartCursorError);
    return (error as StartCursorError).message;
  }
  throw new Error('expected a StartCursorError');
}
