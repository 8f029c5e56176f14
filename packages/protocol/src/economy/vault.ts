import { isoTime } from '../time.js';

/**
 * Vaults lock an amount until `unlock_at` (Unix seconds). The unlock time must be in the future
 * and at most VAULT_MAX_HORIZON_S ahead; a vault is withdrawn once, whole, at or after it.
 */

/** The furthest a vault may unlock: 5 years of 365 days ahead. */
export const VAULT_MAX_HORIZON_S = 5 * 365 * 86_400;

/** Why an unlock time is refused, or undefined when it is acceptable at `now`. */
export function unlockProblem(unlockAt: number, now: number): string | undefined {
  if (unlockAt <= now) {
    return `unlock_at ${unlockAt} (${isoTime(unlockAt)}) is not in the future (now ${now}, ${isoTime(now)})`;
  }
  if (unlockAt - now > VAULT_MAX_HORIZON_S) {
    return `unlock_at ${unlockAt} (${isoTime(unlockAt)}) is more than ${VAULT_MAX_HORIZON_S} s (5 years) ahead of now (${now}, ${isoTime(now)})`;
  }
  return undefined;
}
