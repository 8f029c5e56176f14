import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  fchmodSync,
  fstatSync,
  lstatSync,
  openSync,
  readFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { bearerRefusal } from '@tensormine/service-kit';
import type { FastifyRequest } from 'fastify';
import type { ValidatorConfig } from '../config.js';

/** Bits of a file mode that let other users (group, others) read, write or run it. */
const SHARED_MODE_BITS = 0o077;

/**
 * The admin token: configured, or read from `<dataDir>/admin-token`, or generated there at
 * first start. The file is only ever used with mode 0600: a new file is created 0600, and an
 * existing file with another mode is set to 0600 before use (`modeFixedFrom` says it was,
 * so the caller can warn that the token may have been read). A file that cannot be set to
 * 0600 (another owner, a symbolic link, not a regular file) is refused: the validator does
 * not start rather than trust a token others may know.
 */
export function loadAdminToken(config: Pick<ValidatorConfig, 'adminToken' | 'dataDir'>): {
  token: string;
  file: string | undefined;
  modeFixedFrom: number | undefined;
} {
  if (config.adminToken) return { token: config.adminToken, file: undefined, modeFixedFrom: undefined };
  const fresh = () => randomBytes(32).toString('base64url');
  if (config.dataDir === ':memory:') return { token: fresh(), file: undefined, modeFixedFrom: undefined };
  const file = join(config.dataDir, 'admin-token');
  let modeFixedFrom: number | undefined;
  let existing: string | undefined;
  try {
    const stat = lstatSync(file);
    if (!stat.isFile()) {
      throw new Error(
        `${file} is not a regular file (a symbolic link or a directory): refusing to use it as the admin token`,
      );
    }
    const mode = stat.mode & 0o777;
    if ((mode & SHARED_MODE_BITS) !== 0) {
      try {
        chmodSync(file, 0o600);
      } catch (error) {
        throw new Error(
          `${file} has mode 0${mode.toString(8)} and could not be set to 0600 (${(error as Error).message}): refusing to use an admin token other users can read`,
        );
      }
      modeFixedFrom = mode;
    }
    existing = readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (existing !== undefined && existing.length >= 16) return { token: existing, file, modeFixedFrom };
  // New (or too short to be a token): write a fresh one, 0600 whatever the file had before.
  const token = fresh();
  const fd = openSync(file, 'w', 0o600);
  try {
    fchmodSync(fd, 0o600);
    writeSync(fd, `${token}\n`);
    if ((fstatSync(fd).mode & SHARED_MODE_BITS) !== 0) throw new Error(`${file}: could not set mode 0600`);
  } finally {
    closeSync(fd);
  }
  return { token, file, modeFixedFrom };
}

/** The admin routes' bearer token (the kit's constant-time check). */
const ADMIN_GUARD = {
  realm: 'tensormine-validator-admin',
  name: 'admin token',
  what: 'admin routes',
} as const;

/** Checks `Authorization: Bearer <token>` against the admin token (`unauthorized` otherwise). */
export function checkAdminToken(request: FastifyRequest, adminToken: string): void {
  const refusal = bearerRefusal(request.headers.authorization, adminToken, ADMIN_GUARD);
  if (refusal !== undefined) throw refusal;
}
