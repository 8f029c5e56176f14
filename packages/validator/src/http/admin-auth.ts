import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { ApiError } from './errors.js';

/**
 * Checks `Authorization: Bearer <token>` against the admin token in constant time: both sides
 * are hashed first, so neither the comparison nor the length check leaks the token.
 */
export function checkAdminToken(request: FastifyRequest, adminToken: string): void {
  const header = request.headers.authorization;
  const challenge = { 'www-authenticate': 'Bearer realm="tensormine-validator-admin"' };
  if (typeof header !== 'string' || !/^Bearer\s+\S+$/i.test(header)) {
    throw new ApiError(
      'unauthorized',
      'admin routes need the header Authorization: Bearer <admin token>',
      undefined,
      challenge,
    );
  }
  const presented = header.replace(/^Bearer\s+/i, '');
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(adminToken).digest();
  if (!timingSafeEqual(a, b)) {
    throw new ApiError('unauthorized', 'the admin bearer token is wrong', undefined, challenge);
  }
}
