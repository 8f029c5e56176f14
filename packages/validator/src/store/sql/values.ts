import { StorageError } from '../errors.js';
import type { CoordRecord } from '../types.js';
import type { Row } from './executor.js';

/** Values in and out of the repositories: decoding stored rows, checking values before writing. */

export function corrupt(column: string, value: unknown): StorageError {
  return new StorageError(
    'corrupt_row',
    `stored ${column}: unexpected value ${String(value)} (${typeof value})`,
  );
}

export function text(row: Row, column: string): string {
  const value = row[column];
  if (typeof value !== 'string') throw corrupt(column, value);
  return value;
}

export function nullableText(row: Row, column: string): string | null {
  const value = row[column];
  return value === null ? null : text(row, column);
}

export function int(row: Row, column: string): number {
  const value = row[column];
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw corrupt(column, value);
  return value;
}

export function nullableInt(row: Row, column: string): number | null {
  const value = row[column];
  return value === null ? null : int(row, column);
}

/** Decimal text to bigint (never through Number). */
export function bigintOf(row: Row, column: string): bigint {
  const value = text(row, column);
  if (!/^-?(0|[1-9][0-9]*)$/.test(value)) throw corrupt(column, value);
  return BigInt(value);
}

export function jsonArray(row: Row, column: string): unknown[] {
  const value: unknown = JSON.parse(text(row, column));
  if (!Array.isArray(value)) throw corrupt(column, value);
  return value;
}

export function record(value: unknown, column: string): Row {
  if (typeof value !== 'object' || value === null) throw corrupt(column, value);
  return value as Row;
}

export function checkInteger(what: string, value: number): void {
  if (!Number.isSafeInteger(value)) {
    throw new StorageError('invalid_value', `${what}: expected an integer, got ${String(value)}`);
  }
}

export function checkCount(what: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new StorageError('invalid_value', `${what}: expected a non-negative integer, got ${String(value)}`);
  }
}

export function checkBigint(what: string, value: bigint): void {
  if (typeof value !== 'bigint' || value < 0n) {
    throw new StorageError('invalid_value', `${what}: expected a non-negative bigint, got ${String(value)}`);
  }
}

/** The coordinate of a row with columns q, r, s. */
export function coordOf(row: Row): CoordRecord {
  return { q: int(row, 'q'), r: int(row, 'r'), s: int(row, 's') };
}

/** A coordinate stored in JSON ({q, r, s}). */
export function toCoord(value: unknown): CoordRecord {
  const o = record(value, 'parents');
  return { q: int(o, 'q'), r: int(o, 'r'), s: int(o, 's') };
}

/** `t.a AS t_a, t.b AS t_b`: the columns of the table aliased `alias`, named apart. */
export function prefixed(alias: string, columns: string): string {
  return columns
    .split(', ')
    .map((c) => `${alias}.${c} AS ${alias}_${c}`)
    .join(', ');
}

/** The columns of `row` named `<prefix>_...`, without the prefix. */
export function unprefixed(row: Row, prefix: string): Row {
  const start = `${prefix}_`;
  const out: Record<string, unknown> = {};
  // One pass over the row's own columns (rows are plain records of column name to value).
  for (const key of Object.keys(row)) {
    if (key.startsWith(start)) out[key.slice(start.length)] = row[key];
  }
  return out;
}
