/**
 * "Publish several" (docs/console.md): notifications pasted as a JSON array, or one JSON object
 * per line, sent in one request to `POST /api/v1/notification/batch`, and the answer's outcome per
 * item. Pure: no DOM.
 */

/** One item's outcome in the batch answer (docs/api.md): the single endpoint's body with its index. */
export interface BatchItemResult {
  readonly index: number;
  readonly status?: string;
  readonly code?: string;
  readonly message?: string;
  readonly processed_at?: string;
}

export interface BatchAnswer {
  readonly request_id?: string;
  readonly stored?: number;
  readonly failed?: number;
  readonly results?: readonly BatchItemResult[];
}

/** The pasted notifications, or why they cannot be sent (said in place, nothing is sent). */
export type PastedBatch = { readonly items: readonly unknown[] } | { readonly problem: string };

export function parsePastedBatch(text: string): PastedBatch {
  const trimmed = text.trim();
  if (trimmed === '') return { problem: 'Paste a JSON array of notifications, or one JSON object per line.' };
  if (trimmed.startsWith('[')) {
    try {
      const parsed = JSON.parse(trimmed) as unknown;
      if (Array.isArray(parsed)) return parsed.length > 0 ? { items: parsed } : { problem: 'The array is empty.' };
    } catch (error) {
      return { problem: `Not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
    }
  }
  const items: unknown[] = [];
  const lines = trimmed.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === '') continue;
    try {
      items.push(JSON.parse(line) as unknown);
    } catch (error) {
      return { problem: `Line ${i + 1} is not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
    }
  }
  return { items };
}

/** A batch answer carries per-item results when some item was judged (200, 207, or 400 for all refused). */
export function isBatchAnswer(body: unknown): body is BatchAnswer & { readonly results: readonly BatchItemResult[] } {
  return typeof body === 'object' && body !== null && Array.isArray((body as BatchAnswer).results);
}

/** The summary line of an answer: how many were stored and how many were not. */
export function batchSummary(answer: BatchAnswer & { readonly results: readonly BatchItemResult[] }): string {
  const stored = answer.stored ?? answer.results.filter((result) => result.status === 'success').length;
  const failed = answer.failed ?? answer.results.length - stored;
  return `${stored} stored, ${failed} not stored`;
}

/** The items that were not stored, each as `#index CODE: message`. */
export function failedItems(results: readonly BatchItemResult[]): string[] {
  return results
    .filter((result) => result.status !== 'success')
    .map((result) => `#${result.index} ${result.code ?? 'ERROR'}: ${result.message ?? 'not stored'}`);
}
