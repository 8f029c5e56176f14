/**
 * Constants of the v4.1 "hexchain" consensus. Changing any of them is a consensus change.
 */

/** The header version, `0x00040100` (v4.1.0), the first field of every block header. */
export const HEADER_VERSION = 0x00040100;

/** The lattice bound: a cell is inside the lattice when max(|q|, |r|, |s|) <= 2^20. */
export const LATTICE_RADIUS_MAX = 1_048_576;

/**
 * The domain-separation tags of the hexchain hashes (see `taggedHash`) and of the signed
 * submission message. The proof-of-work hash itself is untagged SHA-256.
 */
export const HEXCHAIN_TAGS = {
  genesis: 'PTM41/genesis',
  cell: 'PTM41/cell',
  parents: 'PTM41/parents',
  challenge: 'PTM41/challenge',
  block: 'PTM41/block',
  submit: 'PTM41/submit',
  entropy: 'PTM41/entropy',
} as const;
