import { describe, expect, it } from 'vitest';
import { StorageError } from '../src/store/errors.js';
import { openSqliteStorage } from '../src/store/sqlite.js';
import type { Storage } from '../src/store/types.js';
import { post, testValidator } from './helpers.js';
import { SLOT_HASH } from './hexchain-mine.js';

/**
 * A database that is busy (a PostgreSQL transaction that lost every re-run to other nodes) or
 * unreachable is not a bug of the validator: the request gets the documented error shape,
 * 503 `service_unavailable` with Retry-After, never a 500.
 */
describe('a busy or unreachable database', () => {
  for (const code of ['storage_busy', 'storage_unavailable'] as const) {
    it(`answers ${code} with 503 service_unavailable and Retry-After`, async () => {
      const real = await openSqliteStorage({ path: ':memory:' });
      let failing = false;
      const storage: Storage = {
        location: real.location,
        read: (fn) => real.read(fn),
        listen: (channel, handler) => real.listen(channel, handler),
        close: () => real.close(),
        transaction: (fn) =>
          failing ? Promise.reject(new StorageError(code, 'the database is busy')) : real.transaction(fn),
      };
      const v = await testValidator({ storage });
      failing = true;
      const res = await post(v, '/api/hexchain/challenge', { slot: 5000, slot_hash: SLOT_HASH });
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.json()).toMatchObject({ code: 'service_unavailable' });
      expect(res.json().message).toContain('send the request again');
      failing = false;
      const again = await post(v, '/api/hexchain/challenge', { slot: 5000, slot_hash: SLOT_HASH });
      expect(again.statusCode).toBe(200);
    });
  }
});
