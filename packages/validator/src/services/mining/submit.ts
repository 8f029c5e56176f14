import {
  formatAmount,
  type ProofWire,
  parseProof,
  proofMessage,
  signatureFromWire,
  verify,
  verifyProof,
} from '@tensormine/protocol';
import { nowSeconds, type ValidatorContext } from '../../context.js';
import { ApiError, verdictError } from '../../http/errors.js';
import { routeHandlers } from '../../http/handlers.js';
import type { ChallengeRecord, TransactionOptions } from '../../store/types.js';
import { challengeFromRecord, notRegistered } from './challenges.js';
import type { InvalidProofBudgets } from './invalid-budget.js';
import type { ProofReceipt, ProofRecorder } from './recorder.js';
import { REWARD_TOKEN, rewardFor } from './rules.js';

/**
 * POST /submit. The checks, in order; the first failure is the answer:
 *   1. field encodings (parseProof)            validation_failed, invalid_nonce
 *   2. the challenge was issued here           challenge_not_found (404)
 *   3. it has not expired (now > expires_at)   challenge_expired (410)
 *   4. challenge_hash is the issued hash       challenge_hash_mismatch (422)
 *   5. miner_pubkey is registered              miner_not_registered (403)
 *   6. the signature by miner_pubkey           signature_required / signature_invalid (401)
 *   7. no accepted proof for (challenge, key)  proof_replayed (409), except the same nonce
 *      again: once it verifies, the original acceptance is the answer (safe client retries)
 *   8. recomputation of the work for the nonce and key, then the thresholds (verifyProof):
 *      tensor_result_mismatch, mml_score_mismatch, path_signature_mismatch,
 *      path_distance_mismatch, computation_hash_mismatch, mml_above_threshold,
 *      path_distance_above_max (422); each such rejection takes one from the key's and the
 *      source address's budgets of invalid proofs (invalid-budget.ts), and a key or address
 *      that spent its budget is refused right after
 *      step 1 with invalid_submission_backoff (429, Retry-After) until its back-off ends
 * Then one transaction records the proof, credits the reward, counts and signs the receipt
 * (with the other proofs the node verified meanwhile: recorder.ts).
 */
export function submitHandlers(budgets: InvalidProofBudgets, recorder: ProofRecorder) {
  return routeHandlers({
    async submitProof({ body, ip }, ctx) {
      const state = { attributable: false };
      try {
        return await submit(body.proof, body.signature, ctx, state, budgets, recorder, ip);
      } catch (error) {
        if (error instanceof ApiError && error.statusCode < 500) {
          await recordRejection(ctx, error, body.proof.miner_pubkey, state.attributable);
        }
        throw error;
      }
    },
  });
}

async function submit(
  proof: ProofWire,
  signature: readonly number[] | undefined,
  ctx: ValidatorContext,
  state: { attributable: boolean },
  budgets: InvalidProofBudgets,
  recorder: ProofRecorder,
  ip: string,
) {
  const parsed = parseProof(proof);
  if (!parsed.ok) {
    const verdict = parsed.verdict;
    throw verdict.ok ? new Error('parseProof rejected without a code') : verdictError(verdict);
  }
  const bytes = parsed.bytes;
  const pubkey = proof.miner_pubkey;
  // Before any storage read or verification: a key in back-off costs one map lookup.
  budgets.check(pubkey, ip);

  // The challenge, the miner's device and the key's earlier proof: one statement.
  const {
    challenge: record,
    device,
    proof: previous,
  } = await ctx.storage.read((tx) => tx.challenges.getForSubmit(proof.challenge_id, pubkey));
  if (!record) {
    throw new ApiError(
      'challenge_not_found',
      `challenge_id ${JSON.stringify(proof.challenge_id)} was not issued by this validator; request a challenge with POST /challenge`,
      { challenge_id: proof.challenge_id },
    );
  }
  const now = nowSeconds(ctx);
  // An identical resubmission (a client retrying after a lost answer) is answered below with
  // the original acceptance, also after the challenge expired.
  const resubmission = previous !== undefined && previous.nonce === proof.computation_nonce;
  if (now > record.expiresAt && !resubmission) {
    throw new ApiError(
      'challenge_expired',
      `challenge ${record.id} expired at ${record.expiresAt} (issued at ${record.issuedAt}, lifetime ${record.expiresAt - record.issuedAt} s) and it is now ${now}; request a new challenge with POST /challenge`,
      { challenge_id: record.id, issued_at: record.issuedAt, expires_at: record.expiresAt, now },
    );
  }
  if (proof.challenge_hash !== record.challengeHash) {
    throw new ApiError(
      'challenge_hash_mismatch',
      `challenge_hash ${proof.challenge_hash} is not the hash of the issued challenge ${record.id} (its \`hash\`)`,
      { challenge_id: record.id, got: proof.challenge_hash },
    );
  }
  if (!device) throw notRegistered(pubkey, 'miner_pubkey');

  if (signature === undefined) {
    if (ctx.config.requireSignatures) {
      throw new ApiError(
        'signature_required',
        'the proof must be signed by miner_pubkey: send signature, the 64-byte ed25519 signature over the canonical proof bytes (proofMessage), as an array of 64 integers',
      );
    }
    // Legacy unsigned mode: nothing authenticates the key, so the key named is all there is.
    state.attributable = true;
  } else {
    let sig: Uint8Array;
    try {
      sig = signatureFromWire(signature);
    } catch (error) {
      throw new ApiError('validation_failed', (error as Error).message);
    }
    if (!verify(sig, proofMessage(bytes), bytes.minerPublicKey)) {
      throw new ApiError(
        'signature_invalid',
        `the signature does not verify against miner_pubkey ${pubkey} over the canonical proof bytes (proofMessage)`,
        { miner_pubkey: pubkey },
      );
    }
    state.attributable = true;
  }

  if (previous && !resubmission) {
    throw replayed(record, pubkey, previous.acceptedAt, previous.ledgerEntryId);
  }

  // The expensive part, outside any transaction: recompute the work for this nonce and key.
  const challenge = challengeFromRecord(record);
  const verdict = verifyProof(challenge, proof, { requireSignature: false, mac: ctx.mac });
  if (!verdict.ok) {
    // Attributable here (registered key, valid signature or legacy unsigned mode).
    budgets.recordInvalid(pubkey, ip);
    throw verdictError(verdict);
  }
  // The same valid proof again, by the same key: what it was answered the first time.
  if (previous) return acceptance(record, pubkey, previous);

  // One transaction credits the reward, signs the receipt over its ledger entry, records the
  // proof and counts it, together with the other proofs this node verified meanwhile
  // (recorder.ts): an earlier acceptance by this key, committed since the read above through
  // this node or another, refuses it by the proof's unique key (undefined, nothing written).
  const written = await recorder.write({
    challengeId: record.id,
    pubkey,
    nonce: proof.computation_nonce,
    computationHash: proof.computation_hash,
    reward: rewardFor(challenge),
    acceptedAt: nowSeconds(ctx),
  });
  let accepted: { earlier: ProofReceipt; fresh: boolean };
  if (written !== undefined) {
    accepted = { earlier: written, fresh: true };
  } else {
    // Accepted meanwhile: the same nonce gets that acceptance, another nonce is a replay.
    // Nothing of this run was kept.
    const earlier = await ctx.storage.read((tx) => tx.proofs.get(record.id, pubkey));
    if (earlier === undefined)
      throw new Error(`proof of ${record.id} by ${pubkey}: refused by a row that is not there`);
    if (earlier.nonce !== proof.computation_nonce) {
      throw replayed(record, pubkey, earlier.acceptedAt, earlier.ledgerEntryId);
    }
    accepted = { earlier, fresh: false };
  }
  if (accepted.fresh) ctx.metrics.recordAccepted('proof');
  budgets.recordValid(pubkey, ip);
  return acceptance(record, pubkey, accepted.earlier);
}

/** The answer to an accepted proof (the first time, and to an identical resubmission). */
function acceptance(record: ChallengeRecord, pubkey: string, accepted: ProofReceipt) {
  return {
    accepted: true,
    tx_sig: accepted.txSig,
    challenge_id: record.id,
    miner_pubkey: pubkey,
    reward: formatAmount(rewardFor(challengeFromRecord(record)), REWARD_TOKEN),
    token: REWARD_TOKEN,
    ledger_entry_id: String(accepted.ledgerEntryId),
    accepted_at: accepted.acceptedAt,
  };
}

function replayed(
  record: ChallengeRecord,
  pubkey: string,
  acceptedAt: number,
  ledgerEntryId: number,
): ApiError {
  return new ApiError(
    'proof_replayed',
    `a proof for challenge ${record.id} by ${pubkey} was already accepted at ${acceptedAt} (ledger entry ${ledgerEntryId}); each key is rewarded once per challenge: request a new challenge with POST /challenge`,
    {
      challenge_id: record.id,
      miner_pubkey: pubkey,
      accepted_at: acceptedAt,
      ledger_entry_id: String(ledgerEntryId),
    },
  );
}

/**
 * Counts a rejection by reason (admin metrics), and against the miner's account when the
 * rejection is attributable to the key: the key is registered and the proof carried a valid
 * signature by it (or signatures are not required and none was sent). A forged submission
 * naming someone else's key never raises that key's proofs_rejected.
 */
async function recordRejection(
  ctx: ValidatorContext,
  error: ApiError,
  pubkey: string,
  attributable: boolean,
): Promise<void> {
  try {
    await ctx.metrics.recordRejection(error.code, 'proof');
    if (attributable) {
      const seenAt = nowSeconds(ctx);
      await ctx.storage.transaction(async (tx) => {
        if (await tx.devices.get(pubkey)) await tx.miners.record(pubkey, { proofsRejected: 1, seenAt });
      }, ROW_LOCKS);
    }
  } catch (countError) {
    ctx.log.warn({ err: countError }, 'could not count a rejected proof');
  }
}

/** The submission's transactions take row locks instead of SERIALIZABLE (docs/storage.md). */
export const ROW_LOCKS: TransactionOptions = { isolation: 'row-locks' };
