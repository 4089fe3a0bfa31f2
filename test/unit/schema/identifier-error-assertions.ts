import { expect } from 'vitest';
import { parseJsonBody } from '../../../src/json/lossless-parse.js';
import type { JsonObject, JsonValue } from '../../../src/json/json-value.js';
import { isJsonObject } from '../../../src/json/json-value.js';
import { IdentifierError } from '../../../src/schema/identifier-error.js';
import { thrownError } from '../../support/thrown-error.js';

/** Runs `action` and returns the IdentifierError it throws; fails the test otherwise. */
export function identifierErrorOf(action: () => unknown): IdentifierError {
  return thrownError(action, IdentifierError);
}

/** Asserts a single-level error: `details` equals `message`. */
export function expectIdentifierError(action: () => unknown, message: string): void {
  const error = identifierErrorOf(action);
  expect({ message: error.message, details: error.details }).toEqual({ message, details: message });
}

/** A JSON value as a request body would carry it (numbers keep their source text). */
export function json(text: string): JsonValue {
  return parseJsonBody(text);
}

export function jsonObject(text: string): JsonObject {
  const value = json(text);
  if (!isJsonObject(value)) throw new Error(`not a JSON object: ${text}`);
  return value;
}
