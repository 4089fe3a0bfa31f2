import cluster from 'node:cluster';

/**
 * Process entry: the server the operator started, or one of its workers (D36,
 * `application.workers`). Each loads only its own part of the code: a primary serves no request.
 */
if (cluster.isWorker) await (await import('./runtime/worker-process.js')).runWorker();
else await (await import('./runtime/startup.js')).startServer();
