/** Transfers between keys. */

/** The longest memo: 64 printable ASCII characters. */
export const TRANSFER_MEMO_MAX = 64;

/** The memo grammar: printable ASCII (space to tilde), at most 64 characters. */
export const TRANSFER_MEMO_PATTERN = '^[\\x20-\\x7E]{0,64}$';
