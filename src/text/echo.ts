/**
 * How a value a client sent is quoted back, in an error answer or a log line (docs/api.md "Echoed
 * values", D45): whole up to `MAX_ECHO_CHARACTERS`, else cut there with a marker that gives its
 * length. Without a cut a 4 KB header quoted in a message, in `details` and three times in the
 * log line turns every 4 KB a client sends into 8 KB of answer and 12 KB of log.
 */

/** The longest value quoted whole, in characters (Unicode code points). */
export const MAX_ECHO_CHARACTERS = 256;

/**
 * `value` as an error message or a log line quotes it: unchanged up to `MAX_ECHO_CHARACTERS`
 * characters, else its first `MAX_ECHO_CHARACTERS` followed by `…(<n> characters)`, `n` being its
 * whole length. A character is never split (a surrogate pair stays whole).
 */
export function echo(value: string): string {
  // Code units bound code points from above: the common case costs one comparison.
  if (value.length <= MAX_ECHO_CHARACTERS) return value;
  const end = endOfCodePoints(value, 0, MAX_ECHO_CHARACTERS);
  if (end === value.length) return value;
  return `${value.slice(0, end)}${cutMarker(countCodePoints(value))}`;
}

function cutMarker(length: number): string {
  return `…(${length} characters)`;
}

/**
 * The same texts (an answer's `message` and `details`, in that order) with at most one cut value
 * in them: the first cut echo stays as it is, every later one (the same value quoted again, or a
 * second long value) keeps only its marker, `…(<n> characters)`. Texts without a cut echo are
 * returned unchanged, so what a client sees for values within the limit never changes.
 */
export function withOneCutValue(texts: readonly string[]): string[] {
  let kept = false;
  return texts.map((text) => {
    let result = '';
    let copiedTo = 0;
    // The end of the last cut echo found: the next one's kept characters cannot begin before it.
    let echoesEnd = 0;
    for (const match of text.matchAll(CUT_MARKER)) {
      const start = startOfCutEcho(text, match.index, Number(match[1]));
      if (start === undefined || start < echoesEnd) continue;
      echoesEnd = match.index + match[0].length;
      if (!kept) {
        kept = true;
        continue;
      }
      result += text.slice(copiedTo, start);
      copiedTo = match.index;
    }
    return copiedTo === 0 ? text : result + text.slice(copiedTo);
  });
}

const CUT_MARKER = /…\((\d+) characters\)/g;

/**
 * Where the kept characters of a cut echo whose marker sits at `markerAt` begin: exactly
 * `MAX_ECHO_CHARACTERS` code points before it, for a value longer than that. Undefined when the
 * text there cannot be an echo this module cut.
 */
function startOfCutEcho(text: string, markerAt: number, length: number): number | undefined {
  if (length <= MAX_ECHO_CHARACTERS) return undefined;
  let start = markerAt;
  for (let count = 0; count < MAX_ECHO_CHARACTERS; count++) {
    if (start === 0) return undefined;
    start -= isLowSurrogateAfterHigh(text, start - 1) ? 2 : 1;
  }
  return start;
}

function isLowSurrogateAfterHigh(text: string, index: number): boolean {
  const code = text.charCodeAt(index);
  if (code < 0xdc00 || code > 0xdfff || index === 0) return false;
  const before = text.charCodeAt(index - 1);
  return before >= 0xd800 && before <= 0xdbff;
}

/** The index after `count` code points of `text` from `start`, or `text.length` when it has fewer. */
function endOfCodePoints(text: string, start: number, count: number): number {
  let index = start;
  for (let seen = 0; seen < count && index < text.length; seen++) {
    const code = text.charCodeAt(index);
    index += code >= 0xd800 && code <= 0xdbff && isLowSurrogate(text.charCodeAt(index + 1)) ? 2 : 1;
  }
  return index;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

function countCodePoints(text: string): number {
  let count = 0;
  for (let index = 0; index < text.length; count++) {
    const code = text.charCodeAt(index);
    index += code >= 0xd800 && code <= 0xdbff && isLowSurrogate(text.charCodeAt(index + 1)) ? 2 : 1;
  }
  return count;
}
