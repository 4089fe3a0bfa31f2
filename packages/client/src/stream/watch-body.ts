import type { WatchRequest } from '../types.js';

/**
 * The POST body of one connection (docs/design/rules/client.md §3 "Resume"): the same request every time, with
 * `from_id` = `resumeAfter` + 1 once something is known to resume after (`from_date` only on the
 * first connection), and a range's pinned `end_sequence` as `to_id` once it is known.
 */
export function watchBody(request: WatchRequest, resumeAfter: number | undefined, pinnedEnd: number | undefined): Record<string, unknown> {
  const body: Record<string, unknown> = { event_type: request.eventType, identifier: request.identifier ?? {} };
  const from = request.from;
  if (resumeAfter !== undefined) body.from_id = String(resumeAfter + 1);
  else if (from !== undefined && 'fromId' in from) body.from_id = String(from.fromId);
  else if (from !== undefined) body.from_date = from.fromDate;
  const to = request.to;
  if (pinnedEnd !== undefined) body.to_id = String(pinnedEnd);
  else if (to !== undefined && 'toId' in to) body.to_id = String(to.toId);
  else if (to !== undefined) body.to_date = to.toDate;
  return body;
}
