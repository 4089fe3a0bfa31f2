import { describe, expect, it } from 'vitest';
import { createExpverHandler } from '../../../src/schema/handlers/expver-handler.js';
import { expectIdentifierError } from './identifier-error-assertions.js';

const handler = createExpverHandler('expver', { type: 'ExpverHandler', required: true });

describe('ExpverHandler', () => {
  it.each([
    ['1', '0001'],
    ['+1', '0001'],
    ['00001', '0001'],
    ['42', '0042'],
    ['0', '0000'],
    ['12345', '12345'],
    ['4294967295', '4294967295'],
  ])('zero-pads the u32 %s to %s', (input, output) => {
    expect(handler.canonicalize(input)).toBe(output);
  });

  it.each([
    ['PROD', 'prod'],
    ['dev-v2.1', 'dev-v2.1'],
    ['-1', '-1'],
    ['4294967296', '4294967296'],
    [' 1', ' 1'],
    ['+', '+'],
    ['0001X', '0001x'],
  ])('lower-cases the other text %j to %j', (input, output) => {
    expect(handler.canonicalize(input)).toBe(output);
  });

  it('rejects the empty string without a default', () => {
    expectIdentifierError(() => handler.canonicalize(''), "Field 'expver' cannot be empty");
  });

  it('uses the canonicalised default for the empty string', () => {
    const numeric = createExpverHandler('expver', { type: 'ExpverHandler', required: true, default: '1' });
    const named = createExpverHandler('expver', { type: 'ExpverHandler', required: true, default: 'PROD' });
    expect(numeric.canonicalize('')).toBe('0001');
    expect(named.canonicalize('')).toBe('prod');
  });

  it('keeps an empty default empty rather than failing', () => {
    const blank = createExpverHandler('expver', { type: 'ExpverHandler', required: true, default: '' });
    expect(blank.canonicalize('')).toBe('');
  });

  it('has no constraint operators', () => {
    expect(handler.parseConstraint).toBeUndefined();
  });
});
