import type { FastifyInstance, FastifyReply } from 'fastify';
import type { StreamsOfDeployment } from '../../streaming/open-streams.js';
import { echo } from '../../text/echo.js';
import { sendOrderedJson } from './json-reply.js';
import { ROUTE_DOCS } from './route-docs.js';
import { parseStreamsQuery, streamsPage } from './stream-admin-page.js';

/**
 * `GET /api/v1/admin/streams` and `DELETE /api/v1/admin/streams/{id}` (D49): every open stream of
 * the deployment, and an operator's close of one. Admin role as every `/api/v1/admin` path (the
 * auth hook); bodies keep their fixed field order (D1).
 */
export function registerStreamAdminRoutes(app: FastifyInstance, deployment: StreamsOfDeployment): void {
  app.get('/api/v1/admin/streams', { schema: ROUTE_DOCS.listStreams }, async (request, reply) => {
    const query = parseStreamsQuery(request.url);
    const gathered = await deployment.list();
    const page = streamsPage(gathered, query);
    request.log.debug(
      {
        event_name: 'admin.streams.list.succeeded',
        total: page.total,
        processes_answered: gathered.answered.length,
        processes_not_answering: gathered.notAnswering.length,
      },
      'Open streams listed',
    );
    return sendOrderedJson(reply, 200, { ...page, request_id: request.id });
  });

  app.delete<{ Params: { id: string } }>('/api/v1/admin/streams/:id', { schema: ROUTE_DOCS.closeStream }, async (request, reply) => {
    const id = request.params.id;
    const closedBy = request.authUser?.username ?? null;
    const answer = (status: number, body: Record<string, unknown>): FastifyReply =>
      sendOrderedJson(reply, status, { ...body, request_id: request.id });
    let outcome;
    try {
      outcome = await deployment.close(id, closedBy);
    } catch (error) {
      const cause = error instanceof Error ? error.message : String(error);
      request.log.error({ event_name: 'admin.stream.close.failed', stream_id: echo(id), error: cause }, 'Stream close failed');
      return answer(500, { success: false, message: `Failed to close stream: ${cause}`, stream_id: id });
    }
    if (outcome.closedOn === undefined) {
      const { notAnswering } = outcome;
      request.log.warn(
        { event_name: 'admin.stream.close.not_found', stream_id: echo(id), processes_not_answering: notAnswering },
        'Stream not found',
      );
      // A process that did not answer may hold it: the operator is told which.
      const unknown = notAnswering.length > 0 ? `; processes not answering: ${notAnswering.join(', ')}` : '';
      return answer(404, {
        success: false,
        message: `Stream not found${unknown}`,
        stream_id: id,
        ...(notAnswering.length > 0 ? { not_answering: notAnswering } : {}),
      });
    }
    request.log.info(
      { event_name: 'admin.stream.close.succeeded', stream_id: id, process: outcome.closedOn, closed_by: closedBy },
      'Stream closed',
    );
    return answer(200, { success: true, message: 'Stream closed', stream_id: id, process: outcome.closedOn });
  });
}
