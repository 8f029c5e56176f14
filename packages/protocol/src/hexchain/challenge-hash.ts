import { i32le, u32le, u64le } from '../bytes.js';
import { ProtocolError } from '../errors.js';
import { taggedHash } from '../hash.js';
import { assertSlot, slotHashDigest } from '../slot.js';
import { assertEntropy } from './cell.js';
import { HEADER_VERSION, HEXCHAIN_TAGS } from './constants.js';
import { type Coord, parseCoord } from './coord.js';
import { targetToBytes } from './target.js';

/** Everything a hexchain challenge commits to. */
export interface HexChallengeHashInput {
  /** Must be HEADER_VERSION when given. */
  readonly version?: number;
  readonly coord: Coord;
  readonly slot: number;
  readonly slotHash: string;
  readonly target: bigint;
  /** `parentsRoot(parents)`, 32 bytes. */
  readonly parentsRoot: Uint8Array;
  /** The validator's 32 bytes of per-challenge entropy. */
  readonly entropy: Uint8Array;
}

/**
 * The challenge hash, which the block header carries:
 * `taggedHash("PTM41/challenge", u32le(version), i32le(q), i32le(r), i32le(s), u64le(slot),
 * SHA-256(utf8(slot_hash)), target (32 bytes big-endian), parents_root, entropy)`.
 * @throws ProtocolError for a field out of range (`unsupported_version`, `invalid_coordinate`,
 *   `validation_failed`, `invalid_target`).
 */
export function hexChallengeHash(input: HexChallengeHashInput): Uint8Array {
  const version = input.version ?? HEADER_VERSION;
  assertVersion(version);
  const coord = parseCoord(input.coord);
  assertSlot(input.slot);
  if (input.parentsRoot.length !== 32) {
    throw new ProtocolError(
      'validation_failed',
      `parents_root: expected 32 bytes, got ${input.parentsRoot.length}`,
    );
  }
  assertEntropy(input.entropy);
  return taggedHash(
    HEXCHAIN_TAGS.challenge,
    u32le(version),
    i32le(coord.q),
    i32le(coord.r),
    i32le(coord.s),
    u64le(input.slot),
    slotHashDigest(input.slotHash),
    targetToBytes(input.target),
    input.parentsRoot,
    input.entropy,
  );
}

/** @throws ProtocolError `unsupported_version` unless `version` is HEADER_VERSION. */
export function assertVersion(version: number): void {
  if (version !== HEADER_VERSION) {
    throw new ProtocolError(
      'unsupported_version',
      `version: expected 0x${hex32(HEADER_VERSION)} (v4.1), got ${Number.isInteger(version) && version >= 0 ? `0x${hex32(version)}` : String(version)}`,
    );
  }
}

function hex32(n: number): string {
  return n.toString(16).padStart(8, '0');
}
