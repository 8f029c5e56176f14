import {
  buildSubmission,
  formatPublicKey,
  fromHex,
  type HexChallenge,
  type KeyPair,
  signRequest,
  solveBlock,
  targetFromHex,
} from '@tensormine/protocol';

/**
 * Builds a lattice of `count` blocks for the read benchmarks (validator reads, status proxy,
 * dashboard): registers `miner`, then challenge, solve (reference solver), submit, one block at
 * a time, putting the difficulty back to 16 every window (blocks come far faster than the
 * target interval, so the retarget rule would raise it fourfold each time).
 *
 * `call` sends one JSON request (over HTTP, or inject() in process) and returns the status and
 * the parsed body.
 */
export type JsonCall = (
  method: 'GET' | 'POST',
  path: string,
  body?: string,
  headers?: Record<string, string>,
) => Promise<{ status: number; body: unknown }>;

export async function buildLattice(
  call: JsonCall,
  miner: KeyPair,
  count: number,
  adminToken: string,
): Promise<void> {
  const path = '/devices/register';
  const body = JSON.stringify({ pubkey: formatPublicKey(miner.publicKey), device_type: 'native' });
  const registered = await call(
    'POST',
    path,
    body,
    signRequest({ method: 'POST', path, body, secretKey: miner.secretKey }),
  );
  if (registered.status !== 200)
    throw new Error(`register: ${registered.status} ${JSON.stringify(registered.body)}`);
  let accepted = 0;
  for (let slot = 1; accepted < count; slot++) {
    if (accepted % 12 === 0) {
      await call('POST', '/admin/config', JSON.stringify({ hexchain_difficulty: 16 }), {
        authorization: `Bearer ${adminToken}`,
      });
    }
    const issued = await call(
      'POST',
      '/api/hexchain/challenge',
      JSON.stringify({ slot, slot_hash: 'bench-lattice' }),
    );
    if (issued.status !== 200) throw new Error(`challenge: ${issued.status} ${JSON.stringify(issued.body)}`);
    const c = issued.body as HexChallenge;
    const challengeHash = fromHex(c.challenge_hash, 32, 'challenge_hash');
    const solved = solveBlock({
      challengeHash,
      coord: c.coord,
      minerPublicKey: miner.publicKey,
      target: targetFromHex(c.target),
      maxIterations: 10_000_000,
    });
    if (!solved) throw new Error(`no block for ${c.id} at difficulty ${c.difficulty}`);
    const submission = buildSubmission({
      challengeId: c.id,
      challengeHash,
      coord: c.coord,
      nonce: solved.nonce,
      keyPair: miner,
    });
    const result = await call('POST', '/api/hexchain/submit', JSON.stringify(submission));
    if (result.status === 200) accepted++;
  }
}

/** A JsonCall over HTTP to `base`. */
export function httpCall(base: string): JsonCall {
  return async (method, path, body, headers = {}) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body }),
    });
    return { status: res.status, body: await res.json() };
  };
}
