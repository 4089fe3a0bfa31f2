import { describe, expect, it } from 'vitest';
import { createStringHandler } from '../../../src/schema/handlers/string-handler.js';
import { expectIdentifierError } from './identifier-error-assertions.js';

describe('StringHandler', () => {
  const plain = createStringHandler('class', { type: 'StringHandler', required: true });
  const limited = createStringHandler('class', { type: 'StringHandler', required: true, max_length: 3 });

  it('returns the text unchanged, without trimming or case change', () => {
    expect(plain.canonicalize(' Od X ')).toBe(' Od X ');
  });

  it('rejects the empty string', () => {
    expectIdentifierError(() => plain.canonicalize(''), "Field 'class' cannot be empty");
  });

  it('accepts text of exactly max_length bytes', () => {
    expect(limited.canonicalize('abc')).toBe('abc');
  });

  it('rejects text longer than max_length', () => {
    expectIdentifierError(() => limited.canonicalize('abcd'), "Field 'class' exceeds maximum length of 3 characters, got: 4");
  });

  it('counts max_length in UTF-8 bytes, so é counts as 2', () => {
    expect(limited.canonicalize('aé')).toBe('aé');
    expectIdentifierError(() => limited.canonicalize('éé'), "Field 'class' exceeds maximum length of 3 characters, got: 4");
  });

  it('rejects the empty string before checking the length', () => {
    const zero = createStringHandler('class', { type: 'StringHandler', required: true, max_length: 0 });
    expectIdentifierError(() => zero.canonicalize(''), "Field 'class' cannot be empty");
  });

  it('has no constraint operators', () => {
    expect(plain.parseConstraint).toBeUndefined();
  });
});
