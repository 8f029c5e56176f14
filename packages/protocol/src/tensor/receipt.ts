import { concatBytes, fromHex, lpString, toHex, u64le, utf8 } from '../bytes.js';
import { sign, verify } from '../ed25519.js';

/**
 * The acceptance receipt of a v4.0 proof. `tx_sig` in the POST /submit answer is the
 * validator's ed25519 signature (by its node identity key) over these bytes:
 *
 *   utf8("PTM4/receipt") || 0x00 || lpString(challenge_id) || miner_pubkey(32) ||
 *   computation_hash(32) || u64le(ledger_entry_id) || u64le(reward minor units) ||
 *   u64le(accepted_at)
 *
 * lpString is a u16le byte length then the UTF-8 bytes; accepted_at is Unix seconds. The
 * token is always PTM (9 decimals), so reward "0.3" is 300 000 000 minor units. A miner that
 * keeps its proof and the answer can show that this validator accepted this exact work
 * (computation_hash commits to the nonce, the result and the key) and credited this reward.
 */
export interface Receipt {
  readonly challengeId: string;
  /** 64 hex digits. */
  readonly minerPubkey: string;
  /** 64 hex digits: the proof's computation_hash. */
  readonly computationHash: string;
  readonly ledgerEntryId: number | bigint;
  /** PTM minor units. */
  readonly rewardMinor: bigint;
  /** Unix seconds. */
  readonly acceptedAt: number;
}

export const RECEIPT_TAG = 'PTM4/receipt';

/** The canonical bytes of a receipt (what tx_sig signs). */
export function receiptMessage(r: Receipt): Uint8Array {
  return concatBytes(
    utf8(RECEIPT_TAG),
    Uint8Array.of(0),
    lpString(r.challengeId),
    fromHex(r.minerPubkey, 32, 'miner_pubkey'),
    fromHex(r.computationHash, 32, 'computation_hash'),
    u64le(r.ledgerEntryId),
    u64le(r.rewardMinor),
    u64le(r.acceptedAt),
  );
}

/** Signs a receipt with the validator's identity key: 128 lowercase hex digits. */
export function signReceipt(r: Receipt, secretKey: Uint8Array): string {
  return toHex(sign(receiptMessage(r), secretKey));
}

/** True when `txSig` (128 hex digits) is the signature of `r` by `validatorPublicKey`. Never throws. */
export function verifyReceipt(r: Receipt, txSig: string, validatorPublicKey: Uint8Array): boolean {
  let signature: Uint8Array;
  let message: Uint8Array;
  try {
    signature = fromHex(txSig, 64, 'tx_sig');
    message = receiptMessage(r);
  } catch {
    return false;
  }
  return verify(signature, message, validatorPublicKey);
}
