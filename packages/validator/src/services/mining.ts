import type { ValidatorContext } from '../context.js';
import { challengeHandlers } from './mining/challenges.js';
import { INVALID_BUDGET, INVALID_BUDGET_PER_ADDRESS, InvalidProofBudgets } from './mining/invalid-budget.js';
import { accountHandlers } from './mining/ledger.js';
import { ProofRecorder } from './mining/recorder.js';
import { ROW_LOCKS, submitHandlers } from './mining/submit.js';
import type { Service } from './types.js';

export {
  challengeIdFor,
  deviceIdFor,
  REWARD_PER_MIMAC_MINOR,
  REWARD_TOKEN,
  rewardFor,
} from './mining/rules.js';

/**
 * The v4.0 mining service: POST /challenge, POST /submit, GET /miners/:pubkey,
 * GET /ledger/entries (devices are services/devices/).
 * All state lives in ctx.storage; the service itself keeps none but the proofs it is committing
 * (the group of mining/recorder.ts) and the invalid-proof budgets.
 */
export function createMiningService(ctx: ValidatorContext): Service {
  return {
    handlers: {
      ...challengeHandlers(),
      ...submitHandlers(
        new InvalidProofBudgets(
          ctx.now,
          { ...INVALID_BUDGET, burst: ctx.config.invalidProofBudget },
          { ...INVALID_BUDGET_PER_ADDRESS, burst: ctx.config.invalidProofBudgetPerAddress },
        ),
        new ProofRecorder(ctx.storage, ctx.identity.secretKey, ROW_LOCKS),
      ),
      ...accountHandlers(),
    },
  };
}
