import { describe, expect, it } from 'vitest';
import { isRustWhitespace, trimRust, trimRustStart } from '../../../src/text/rust-whitespace.js';

describe('Rust whitespace', () => {
  it.each([' ', '\t', '\n', '\r', '\v', '\f', '\u0085', '\u00a0', '\u2003', '\u3000'])('treats %j as whitespace', (char) => {
    expect(isRustWhitespace(char)).toBe(true);
  });

  it('does not treat the byte order mark as whitespace, unlike JavaScript trim', () => {
    expect(isRustWhitespace('\ufeff')).toBe(false);
    expect(trimRust('\ufeff1\ufeff')).toBe('\ufeff1\ufeff');
  });

  it('trims both ends', () => {
    expect(trimRust(' \u0085 a b \t')).toBe('a b');
  });

  it('trims only the start', () => {
    expect(trimRustStart('  a ')).toBe('a ');
  });

  it('trims whitespace-only text to empty', () => {
    expect(trimRust(' \n ')).toBe('');
  });
});
