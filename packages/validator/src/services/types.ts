import type { SseHub } from '@tensormine/protocol';
import type { Handlers } from '../http/routes.js';

/** A part of the validator that serves some routes. */
export interface Service {
  readonly handlers: Handlers;
}

/** The v4.1 hexchain service (hexChallenge, hexSubmit, hexStatus, hexLattice, hexBlock). */
export interface HexchainService extends Service {
  /** The current difficulty (after retargets) and the number of occupied coordinates. */
  info(): { readonly difficulty: bigint; readonly occupied: number };
  /** Sets the current difficulty (POST /admin/config hexchain_difficulty); persisted. */
  setDifficulty(difficulty: bigint): Promise<void>;
  /** The push channel of GET /api/hexchain/events. */
  readonly events: SseHub;
  /** Ends the event streams (before the server closes). */
  close(): void;
}
