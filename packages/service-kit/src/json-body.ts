import type { FastifyInstance } from 'fastify';

// `request.rawBody` is declared beside createServiceApp (app.ts), so that it is part of the
// package's declarations.

/**
 * The one body parser of every service: JSON only (anything else is 415
 * `unsupported_media_type`), parsed with Fastify's own safe parser (prototype-poisoning
 * protection), up to `bodyLimit` bytes (413 `body_too_large`), with the raw bytes kept: a signed
 * request is verified over the bytes that were sent, never over a re-serialisation.
 */
export function acceptJsonBodies(app: FastifyInstance, bodyLimit: number): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit }, (request, body, done) => {
    request.rawBody = body as Buffer;
    parse(request, (body as Buffer).toString('utf8'), done);
  });
}
