import type { FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** The exact bytes of a JSON body, kept for signed-request verification. */
    rawBody?: Buffer;
  }
}

/**
 * Parses JSON bodies with Fastify's own safe parser (prototype-poisoning protection) while
 * keeping the raw bytes: a signed request is verified over the bytes that were sent, never
 * over a re-serialisation. JSON is the only body type: anything else is 415.
 */
export function keepRawJsonBodies(app: FastifyInstance, bodyLimit: number): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit }, (request, body, done) => {
    request.rawBody = body as Buffer;
    parse(request, (body as Buffer).toString('utf8'), done);
  });
}
