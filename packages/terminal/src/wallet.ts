import { randomBytes } from 'node:crypto';
import { base58 } from '@scure/base';
import { fromHex, toHex, verify } from '@tensormine/protocol';

/**
 * Wallets as the terminal sees them: the base58 form of an ed25519 public key (what wallets
 * show), the same key the validator names in hex. A browser proves a wallet by signing a
 * one-time challenge message with its key; the proof is kept in the session cookie.
 */

/** The validator's hex public key of a base58 wallet address; undefined when it is not 32 bytes. */
export function walletToPubkey(wallet: string): string | undefined {
  try {
    const bytes = base58.decode(wallet);
    return bytes.length === 32 ? toHex(bytes) : undefined;
  } catch {
    return undefined;
  }
}

/** The base58 wallet address of a hex public key. */
export function pubkeyToWallet(pubkeyHex: string): string {
  return base58.encode(fromHex(pubkeyHex, 32, 'public key'));
}

/** A challenge as kept in the session: the message and when it stops being accepted. */
export interface PendingChallenge {
  readonly wallet: string;
  readonly message: string;
  /** Unix seconds. */
  readonly expiresAt: number;
}

export const CHALLENGE_TTL_S = 300;

/**
 * The text the wallet signs: it names the site (so a signature given to another site is of no
 * use here), the wallet, a one-time nonce and the validity window.
 */
export function newChallenge(wallet: string, origin: string, nowMs: number): PendingChallenge {
  const issued = Math.floor(nowMs / 1000);
  const expiresAt = issued + CHALLENGE_TTL_S;
  const nonce = randomBytes(16).toString('hex');
  const message = [
    `${new URL(origin).host} asks you to prove that you own this wallet.`,
    '',
    `Wallet: ${wallet}`,
    `URI: ${origin}`,
    `Nonce: ${nonce}`,
    `Issued At: ${new Date(issued * 1000).toISOString()}`,
    `Expiration Time: ${new Date(expiresAt * 1000).toISOString()}`,
    '',
    'Signing this message moves no funds and grants no spending rights.',
  ].join('\n');
  return { wallet, message, expiresAt };
}

export type ChallengeCheck = 'ok' | 'missing' | 'expired' | 'wrong_wallet' | 'bad_signature';

/** Checks a signature of the pending challenge for `wallet`. */
export function checkChallenge(
  pending: PendingChallenge | undefined,
  wallet: string,
  signatureHex: string,
  nowMs: number,
): ChallengeCheck {
  if (!pending) return 'missing';
  if (pending.wallet !== wallet) return 'wrong_wallet';
  if (Math.floor(nowMs / 1000) > pending.expiresAt) return 'expired';
  const pubkey = walletToPubkey(wallet);
  if (!pubkey) return 'bad_signature';
  const ok = verify(
    fromHex(signatureHex, 64, 'signature'),
    new TextEncoder().encode(pending.message),
    fromHex(pubkey, 32, 'public key'),
  );
  return ok ? 'ok' : 'bad_signature';
}
