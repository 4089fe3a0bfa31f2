// The server serves the `eventsource-parser` package's ESM build at /console/vendor/
// eventsource-parser.js (src/http/routes/console-routes.ts); its types are the package's own.
export { createParser } from 'eventsource-parser';
export type { EventSourceMessage, EventSourceParser, ParserCallbacks } from 'eventsource-parser';
