import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import {
  buildSubmission,
  type Coord,
  encodeHeader,
  fromHex,
  type HexChallenge,
  type KeyPair,
  signRequest,
  toHex,
} from '@tensormine/protocol';
import { buildDir } from './driver.ts';

/**
 * What the network tests and the network bench do to a validator besides the boards: register a
 * key (a signed request), and take a board's cell with a block of the harness's own, solved by
 * the C core in a child process so that a validator in the same process keeps answering.
 */

/** POST /devices/register signed by `key`; the HTTP status. */
export async function registerKey(url: string, key: KeyPair, body: Record<string, unknown>): Promise<number> {
  const payload = JSON.stringify({ pubkey: toHex(key.publicKey), device_type: 'esp32', ...body });
  const headers = signRequest({
    method: 'POST',
    path: '/devices/register',
    body: payload,
    secretKey: key.secretKey,
  });
  const res = await fetch(`${url}/devices/register`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: payload,
  });
  return res.status;
}

/** build/tm-vectors in a child process solving blocks, one command at a time. */
export class BlockSolver {
  readonly #child = spawn(join(buildDir, 'tm-vectors'), { stdio: ['pipe', 'pipe', 'inherit'] });
  readonly #lines = createInterface({ input: this.#child.stdout! })[Symbol.asyncIterator]();
  #queue: Promise<unknown> = Promise.resolve();

  /** The first nonce from 0 whose pow hash meets the challenge's target, for `key`. */
  solve(challenge: HexChallenge, key: KeyPair): Promise<number> {
    const header = encodeHeader({
      coord: challenge.coord,
      challengeHash: fromHex(challenge.challenge_hash),
      minerPublicKey: key.publicKey,
      nonce: 0,
    });
    const command = `search_block ${toHex(header.subarray(0, 80))} ${challenge.target} 0 9000000000000000`;
    const run = this.#queue.then(async () => {
      this.#child.stdin!.write(`${command}\n`);
      const answer = (await this.#lines.next()).value as string;
      const found = /^found (\d+) /.exec(answer);
      if (!found) throw new Error(`the C search answered ${answer}`);
      return Number(found[1]);
    });
    this.#queue = run.catch(() => {});
    return run;
  }

  close(): void {
    this.#child.stdin!.end();
  }
}

export interface TakenCell {
  /** performance.now() just before the block was submitted. */
  readonly at: number;
  readonly status: number;
  readonly code: string | undefined;
}

/**
 * Takes `coord` with `key`: asks for challenges until one is for that cell, solves it and submits
 * it. undefined when no challenge came for the cell (it is no longer on the frontier).
 */
export async function takeCell(
  url: string,
  key: KeyPair,
  coord: Coord,
  solver: BlockSolver,
): Promise<TakenCell | undefined> {
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  for (let i = 0; i < 400; i++) {
    const res = await post('/api/hexchain/challenge', {
      slot: 1,
      slot_hash: 'network-harness',
      miner_pubkey: toHex(key.publicKey),
    });
    const c = res.body as unknown as HexChallenge;
    if (res.status !== 200 || c.coord.q !== coord.q || c.coord.r !== coord.r) continue;
    const submission = buildSubmission({
      challengeId: c.id,
      challengeHash: fromHex(c.challenge_hash),
      coord: c.coord,
      nonce: await solver.solve(c, key),
      keyPair: key,
    });
    const at = performance.now();
    const done = await post('/api/hexchain/submit', submission);
    return { at, status: done.status, code: done.body.code as string | undefined };
  }
  return undefined;
}
