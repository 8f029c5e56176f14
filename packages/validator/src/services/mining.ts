import type { ValidatorContext } from '../context.js';
import { challengeHandlers } from './mining/challenges.js';
import { deviceHandlers } from './mining/devices.js';
import { accountHandlers } from './mining/ledger.js';
import { submitHandlers } from './mining/submit.js';
import type { Service } from './types.js';

export {
  challengeIdFor,
  deviceIdFor,
  REWARD_PER_LEVEL_MINOR,
  REWARD_TOKEN,
  rewardFor,
} from './mining/rules.js';

/**
 * The v4.0 mining service: POST /challenge, POST /submit, GET /miners/:pubkey,
 * POST /devices/register, GET /devices, GET /ledger/entries.
 * All state lives in ctx.storage; the service itself keeps none.
 */
export function createMiningService(_ctx: ValidatorContext): Service {
  return {
    handlers: {
      ...challengeHandlers(),
      ...submitHandlers(),
      ...deviceHandlers(),
      ...accountHandlers(),
    },
  };
}
