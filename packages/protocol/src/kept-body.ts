/**
 * How a serialized JSON answer that a server sends many times (a cached read) is best kept:
 * as a string when short, as bytes when long.
 *
 * Node writes a short string together with the response head in one socket write (from a stack
 * buffer), while a Buffer goes out as its own chunk of a writev. Measured on the validator's
 * reads bench (1,000 connections, docs/benchmarks.md): the ~1 kB hexchain status as a Buffer
 * cost about a third more server time in that write than as a string; a 40 kB lattice page as
 * a Buffer cost a third less CPU per answer than as a string (no encoding and no copy of it).
 */
export function keptBody(text: string): string | Buffer {
  return text.length <= KEPT_AS_STRING_MAX ? text : Buffer.from(text);
}

/** Answers up to this many characters are kept as strings, longer ones as bytes. */
export const KEPT_AS_STRING_MAX = 4096;
