/**
 * Whitespace as Rust's `str::trim` sees it (Unicode `White_Space`). JavaScript's `trim()` differs:
 * it also strips U+FEFF and keeps U+0085, and the reference's leniency (polygon and point text,
 * date components) must accept and refuse exactly the same inputs.
 */
const RUST_WHITESPACE = /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$/;

export function isRustWhitespace(char: string): boolean {
  return RUST_WHITESPACE.test(char);
}

/** `str::trim_start`. All White_Space characters are in the BMP, so code units suffice. */
export function trimRustStart(text: string): string {
  let start = 0;
  while (start < text.length && isRustWhitespace(text.charAt(start))) start++;
  return text.slice(start);
}

/** `str::trim`. */
export function trimRust(text: string): string {
  let end = text.length;
  while (end > 0 && isRustWhitespace(text.charAt(end - 1))) end--;
  return trimRustStart(text.slice(0, end));
}
