/**
 * Every stable error code of the protocol: the HTTP status the validator answers with and a
 * short description. The validator builds its error responses from this table, the client maps
 * responses back to typed errors through it, and docs/errors.md is generated from it.
 * Codes are never renamed or reused; new codes are appended.
 */
export const ERROR_CODES = {
  // Request shape and transport
  validation_failed: { status: 400, description: 'The request does not match the schema.' },
  invalid_json: { status: 400, description: 'The body is not valid JSON.' },
  invalid_amount: { status: 400, description: 'An amount is not a valid decimal string for its token.' },
  invalid_coordinate: {
    status: 400,
    description: 'A lattice coordinate is not integers with q + r + s = 0 inside the lattice bounds.',
  },
  unknown_token: { status: 400, description: 'The token symbol is not listed by this validator.' },
  unsupported_device_type: { status: 400, description: 'The device type is not one the protocol defines.' },
  unsupported_media_type: { status: 415, description: 'The body is not application/json.' },
  body_too_large: { status: 413, description: 'The body is larger than the configured limit.' },
  not_found: { status: 404, description: 'No such route.' },
  method_not_allowed: { status: 405, description: 'The route exists but not for this method.' },
  rate_limited: {
    status: 429,
    description: 'Too many requests from this key or address; retry after the indicated delay.',
  },

  // Authentication
  unauthorized: { status: 401, description: 'The admin bearer token is missing or wrong.' },
  signature_required: {
    status: 401,
    description: 'The operation acts for a public key and must be signed by it.',
  },
  signature_invalid: { status: 401, description: 'The signature does not verify against the public key.' },
  request_expired: { status: 401, description: 'The signed request timestamp is outside the replay window.' },
  request_replayed: {
    status: 409,
    description: 'The signed request nonce was already used within the replay window.',
  },
  pubkey_mismatch: {
    status: 403,
    description: 'The body names a different public key than the one that signed the request.',
  },
  miner_not_registered: {
    status: 403,
    description: 'The public key is not registered; register it with POST /devices/register.',
  },

  // v4.0 challenges and proofs
  challenge_not_found: {
    status: 404,
    description: 'No challenge with this id was issued by this validator.',
  },
  challenge_expired: { status: 410, description: 'The challenge expired before the proof arrived.' },
  challenge_hash_mismatch: {
    status: 422,
    description: 'challenge_hash is not the hash of the issued challenge.',
  },
  proof_replayed: { status: 409, description: 'A proof for this challenge and key was already accepted.' },
  tensor_result_mismatch: {
    status: 422,
    description:
      'tensor_result_hash differs from the recomputed result for this nonce and key (the answer says which check failed, never the recomputed value).',
  },
  mml_score_mismatch: { status: 422, description: 'mml_score differs from the recomputed score.' },
  path_signature_mismatch: {
    status: 422,
    description: 'path_signature differs from the recomputed neural path.',
  },
  path_distance_mismatch: { status: 422, description: 'path_distance differs from the recomputed distance.' },
  computation_hash_mismatch: {
    status: 422,
    description: 'computation_hash differs from the recomputed commitment.',
  },
  mml_above_threshold: { status: 422, description: 'mml_score is above the challenge mml_threshold.' },
  path_distance_above_max: {
    status: 422,
    description: 'path_distance is above the challenge path_distance_max.',
  },
  invalid_nonce: {
    status: 400,
    description:
      'The nonce is not an integer in [0, 2^53) (returned by verifyProof and verifyBlock; over HTTP the request schema refuses such a body first with validation_failed).',
  },
  invalid_submission_backoff: {
    status: 429,
    description:
      'This key spent its budget of invalid proofs (each costs the validator a full recomputation): it is refused until Retry-After, the wait doubling at each new exhaustion.',
  },

  // v4.1 hexchain
  hexchain_disabled: {
    status: 404,
    description:
      'Reserved, never answered: a validator started without v4.1 does not register the /api/hexchain/ routes, so they answer not_found.',
  },
  coordinate_mismatch: {
    status: 422,
    description: 'The block coordinate is not the coordinate of the challenge.',
  },
  coordinate_occupied: {
    status: 409,
    description: 'A block already occupies this coordinate; the first valid block wins.',
  },
  pow_hash_mismatch: { status: 422, description: 'pow_hash differs from the hash of the recomputed header.' },
  pow_above_target: { status: 422, description: 'The proof-of-work hash is above the challenge target.' },
  block_not_found: { status: 404, description: 'No block occupies this coordinate.' },

  // Economy (later issues; listed so that codes stay stable)
  insufficient_balance: { status: 409, description: 'The account balance is lower than the amount.' },
  stake_not_found: { status: 404, description: 'No stake position with this id belongs to this key.' },
  vault_not_found: { status: 404, description: 'No vault with this id belongs to this key.' },
  vault_locked: { status: 409, description: 'The vault unlock time has not been reached.' },
  vault_withdrawn: { status: 409, description: 'The vault was already withdrawn.' },
  slippage_exceeded: { status: 409, description: 'The swap output would be below min_received.' },
  pool_not_member: { status: 409, description: 'The key is not a member of the pool.' },
  pool_already_member: { status: 409, description: 'The key is already a member of the pool.' },
  stake_below_minimum: { status: 422, description: 'The stake amount is below the minimum.' },
  order_not_found: { status: 404, description: 'No order with this id belongs to this key.' },
  transfer_not_found: { status: 404, description: 'No transfer with this id exists.' },
  swap_pool_not_found: { status: 404, description: 'No swap pool trades this pair of tokens.' },
  order_not_open: {
    status: 409,
    description: 'The order is already filled or cancelled; nothing is left to cancel.',
  },
  unlock_time_invalid: {
    status: 422,
    description: 'unlock_at is not in the future or is beyond the maximum vault horizon.',
  },
  amount_too_small: {
    status: 422,
    description: 'The amount is 0 or too small to move anything after rounding (e.g. a swap output of 0).',
  },
  market_unsupported: {
    status: 422,
    description: 'The marketplace does not trade this token against this quote token.',
  },
  idempotency_conflict: {
    status: 409,
    description:
      'The signed request reuses the nonce of an earlier, different request by this key; sign it with a fresh nonce.',
  },

  // Mining pool shares (docs/protocol.md sections 4.13 to 4.16)
  pool_disabled: {
    status: 409,
    description: 'The validator runs pool_strategy solo: it takes no pool members and no shares.',
  },
  share_not_reserved: {
    status: 409,
    description:
      'The challenge was not issued to this pool member with a share target; request one with miner_pubkey.',
  },
  share_above_target: {
    status: 422,
    description: "The share's proof-of-work hash is above the member's share target.",
  },
  share_duplicate: { status: 409, description: 'This share (the same header) was already submitted.' },
  share_stale: {
    status: 409,
    description: 'The share is valid but its challenge expired or its cell is occupied: counted, not paid.',
  },
  share_backoff: {
    status: 429,
    description: 'Too many invalid shares from this member lately; retry after the indicated delay.',
  },
  // Malformed HTTP (answered before any route runs)
  bad_request: {
    status: 400,
    description:
      'The request is not valid HTTP: an unknown method, a raw non-ASCII byte or bad percent-encoding in the path.',
  },
  uri_too_long: { status: 414, description: 'A path segment is longer than the validator accepts.' },
  headers_too_large: { status: 431, description: 'The request headers are larger than the server accepts.' },
  request_timeout: { status: 408, description: 'The request did not arrive in time.' },

  // Server side
  service_unavailable: {
    status: 503,
    description:
      'The service is starting or shutting down, its database is busy, unreachable or failing over, or it is at a capacity of all its clients (every event-stream slot taken, the status proxy at its budget of validator requests): nothing was written (unless the message says the connection to the database broke during COMMIT: then the outcome is unknown); send the identical request again after Retry-After, which is safe (docs/cluster.md).',
  },
  internal_error: { status: 500, description: 'An unexpected server error (a bug: please report it).' },

  // Hub and terminal backend (issue 13)
  game_not_found: { status: 404, description: 'No game with this id is in the hub directory.' },
  oauth_failed: {
    status: 400,
    description:
      'The sign-in could not complete: consent refused, state missing, wrong or already used, or the provider refused the code.',
  },
  session_required: {
    status: 401,
    description:
      'Sign in (social account) and prove the wallet in this browser first; or the claim session does not match.',
  },
  wallet_proof_invalid: {
    status: 401,
    description:
      'The wallet challenge is missing or expired, or the signature does not verify with the wallet key.',
  },
  wallet_mismatch: {
    status: 403,
    description: 'The request names another wallet than the one this browser proved.',
  },
  already_claimed: {
    status: 409,
    description:
      'The welcome tokens were already claimed by this social account or to this wallet (with another wallet or account).',
  },
  treasury_empty: {
    status: 503,
    description: 'The treasury cannot pay the welcome tokens now; nothing was sent. Try again later.',
  },
  treasury_not_configured: { status: 503, description: 'This terminal has no treasury key: claims are off.' },
  payment_invalid: {
    status: 422,
    description: 'The transfer does not pay this purchase: another sender, recipient or token.',
  },
  payment_too_small: { status: 422, description: 'The transfer is below the price of the product.' },
  payment_already_used: { status: 409, description: 'The transfer already paid for a purchase.' },
  upstream_unavailable: {
    status: 502,
    description:
      'The validator behind this service (status proxy, terminal) could not be reached or answered unexpectedly (network error, timeout or 5xx).',
  },
  device_limit_reached: {
    status: 429,
    description:
      'The address already has as many devices with a callback port as the validator allows (deviceCallbacksPerAddress).',
  },

  // Open-network limits (issue 21)
  order_below_minimum: {
    status: 422,
    description:
      "The order is worth less than the marketplace's minimum order value at its limit price (details.minimum_value).",
  },
  too_many_streams: {
    status: 429,
    description:
      'This client address (or, behind a trusted proxy, this client) already holds the most event streams it may; close one first.',
  },
  path_forbidden: {
    status: 403,
    description: 'The path of a static file leaves the served directory or names a hidden file.',
  },
} as const satisfies Record<string, { status: number; description: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CODES, value);
}

/** The result of a verification: success, or a stable code with a message and details. */
export type Verdict =
  | { readonly ok: true }
  | {
      readonly ok: false;
      readonly code: ErrorCode;
      readonly message: string;
      readonly details?: Readonly<Record<string, unknown>>;
    };

export function reject(code: ErrorCode, message: string, details?: Record<string, unknown>): Verdict {
  return details === undefined ? { ok: false, code, message } : { ok: false, code, message, details };
}

export const OK: Verdict = { ok: true };
