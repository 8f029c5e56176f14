import { StorageError } from '../errors.js';
import type { Scope } from './scope.js';
import { int } from './values.js';

/** Takes the next value of a sequence (a row of `sequences`; on PostgreSQL its native SEQUENCE): never the same twice once committed. */
export async function nextSerial(scope: Scope, what: string, sequence: string): Promise<number> {
  const db = scope.write(what);
  if (db.dialect.concurrentWriters) {
    // The native sequence of the schema (Dialect.sequences): never a conflict between nodes.
    const next = await db.prepare('SELECT nextval(?::regclass) AS serial').get(`tm_seq_${sequence}`);
    if (next === undefined) throw new StorageError('corrupt_row', `the sequence ${sequence} is missing`);
    return int(next, 'serial');
  }
  const row = await db
    .prepare(
      'UPDATE sequences SET next_value = next_value + 1 WHERE name = ? RETURNING next_value - 1 AS serial',
    )
    .get(sequence);
  if (row === undefined) throw new StorageError('corrupt_row', `the sequence ${sequence} is missing`);
  return int(row, 'serial');
}
