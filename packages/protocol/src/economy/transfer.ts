import { toHex, utf8 } from '../bytes.js';
import { sha256 } from '../hash.js';

/** Transfers between keys. */

/** The longest memo: 64 printable ASCII characters. */
export const TRANSFER_MEMO_MAX = 64;

/** The memo grammar: printable ASCII (space to tilde), at most 64 characters. */
export const TRANSFER_MEMO_PATTERN = '^[\\x20-\\x7E]{0,64}$';

/**
 * The id of the transfer a signed `POST /transfer` makes: `t-` and the first 32 hex digits of
 * `SHA-256("transfer:" + from + ":" + nonce + ":" + timestamp)`, with `from` the body's sender
 * (the signing key, 64 hex digits), `nonce` the request's `x-tm-nonce` (32 lowercase hex digits)
 * and `timestamp` its `x-tm-timestamp` (decimal milliseconds). A client knows the id before the
 * answer arrives, a retry of the same signed request maps to the same transfer, and no other
 * executed request can (a nonce is never executed twice within its window, and the timestamp
 * separates a nonce reused later).
 */
export function transferId(input: {
  readonly from: string;
  readonly nonce: string;
  readonly timestamp: number | string;
}): string {
  const digest = sha256(utf8(`transfer:${input.from}:${input.nonce}:${input.timestamp}`));
  return `t-${toHex(digest).slice(0, 32)}`;
}
