import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError } from './api-error.js';

/** What a token guards, for the messages and the `WWW-Authenticate` realm. */
export interface BearerGuard {
  /** The realm of the challenge, e.g. `tensormine-validator-admin`. */
  readonly realm: string;
  /** The token's name in messages, e.g. `admin token`. */
  readonly name: string;
  /** What needs it, e.g. `admin routes`. */
  readonly what: string;
}

/**
 * Checks an `Authorization: Bearer <token>` header against `token` in constant time: both sides
 * are hashed first, so neither the comparison nor the length check leaks the token. Returns the
 * 401 `unauthorized` to answer (with `WWW-Authenticate: Bearer realm=...`), or undefined when the
 * header carries the token.
 */
export function bearerRefusal(
  header: string | string[] | undefined,
  token: string,
  guard: BearerGuard,
): ApiError | undefined {
  const challenge = { 'www-authenticate': `Bearer realm="${guard.realm}"` };
  if (typeof header !== 'string' || !/^Bearer\s+\S+$/i.test(header)) {
    return new ApiError(
      'unauthorized',
      `${guard.what} need the header Authorization: Bearer <${guard.name}>`,
      undefined,
      challenge,
    );
  }
  const presented = header.replace(/^Bearer\s+/i, '');
  if (!timingSafeEqual(digest(presented), digest(token))) {
    return new ApiError('unauthorized', `the ${guard.name} is wrong`, undefined, challenge);
  }
  return undefined;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
