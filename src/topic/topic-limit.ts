/** D24: a subject longer than this is refused before anything is stored, on both backends. */
export const MAX_TOPIC_BYTES = 2048;

export function topicTooLongMessage(bytes: number): string {
  return `Identifier values are too long: the topic would be ${bytes} bytes, the limit is ${MAX_TOPIC_BYTES}`;
}
