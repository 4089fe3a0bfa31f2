import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { SERVER_VERSION } from '../../version.js';
import { API_COMPONENTS } from './api-schemas.js';

/**
 * The OpenAPI 3.1 document generated from the routes' TypeBox schemas and the Swagger UI that
 * browses it (docs/design/rules/operations.md §4.4). Must be registered before the routes it describes.
 */
export async function registerApiDocs(app: FastifyInstance): Promise<void> {
  for (const component of API_COMPONENTS) app.addSchema(component);
  // Bodies are parsed by our own request parser (exact protocol errors) and replies are sent as
  // prepared JSON text, so the schemas only document: no validation, no serialization.
  app.setValidatorCompiler(() => () => true);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Aviso Notification Service API',
        version: SERVER_VERSION,
        description: 'Real-time notification service developed by ECMWF',
        contact: { name: 'Aviso API Support', url: 'https://www.ecmwf.int/en/about/contact-us' },
        license: { name: 'Apache 2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
      },
      tags: ['health', 'general', 'schema', 'notification', 'streaming', 'admin'].map((name) => ({ name })),
      components: {
        securitySchemes: {
          bearer_jwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          basic: { type: 'http', scheme: 'basic' },
        },
      },
    },
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a schema's $id is a string (JSON Schema); String() only gives the resolver's return type
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, index) => String(json.$id ?? `def-${index}`) },
  });
  await app.register(swaggerUi, {
    routePrefix: '/swagger-ui',
    staticCSP: true,
    // The UI sets inline styles, and must work over plain HTTP on any host, so the default policy's
    // `style-src https:` and `upgrade-insecure-requests` would leave it blank.
    transformStaticCSP: (header) =>
      header.replace("style-src 'self' https:", "style-src 'self' 'unsafe-inline'").replace(/\s*upgrade-insecure-requests;?/, ''),
  });
  app.get('/api-docs/openapi.json', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/json').send(JSON.stringify(app.swagger())),
  );
}
