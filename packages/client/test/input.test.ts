import { ROUTES } from '@tensormine/protocol';
import { MockAgent } from 'undici';
import { describe, expect, it } from 'vitest';
import { InvalidInputError, type RequestEvent, Signer } from '../src/index.js';
import { checkInput } from '../src/input.js';
import { client, track } from './helpers.js';

/** Local input checks: nothing is sent when an input is wrong, and the message says why. */

const KEY = 'ab'.repeat(32);

function offline() {
  const agent = new MockAgent();
  agent.disableNetConnect();
  track(agent);
  const c = client({
    url: 'http://v.test',
    dispatcher: agent,
    signer: Signer.generate(),
    adminToken: 'x'.repeat(20),
  });
  const requests: RequestEvent[] = [];
  c.on('request', (e) => requests.push(e));
  return { c, requests };
}

async function problemOf(promise: Promise<unknown>): Promise<InvalidInputError> {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(InvalidInputError);
  return error as InvalidInputError;
}

describe('schema checks', () => {
  it('says what was expected and what arrived, for every problem, and sends nothing', async () => {
    const { c, requests } = offline();
    const error = await problemOf(
      // @ts-expect-error: wrong on purpose
      c.economy.stake({ amount: 12.5, lock_period_days: 3 }),
    );
    expect(error.problems.map((p) => p.message)).toEqual([
      'body.amount: expected a string, got 12.5',
      'body.lock_period_days: expected one of 0, 7, 30, got 3',
    ]);
    expect(error.shortMessage).toBe('stake: body.amount: expected a string, got 12.5 (and 1 more)');
    expect(error.details).toEqual({ errors: error.problems });
    expect(requests).toEqual([]);
  });

  it('names nested paths, lengths and patterns', async () => {
    const { c } = offline();
    const error = await problemOf(
      c.hexchain.submit({
        challenge_id: 'h-1',
        // @ts-expect-error: wrong on purpose
        block: { coord: { q: 1.5, r: 0, s: 0 }, pow_hash: 'AB', nonce: -1 },
      }),
    );
    expect(error.problems.map((p) => p.message)).toEqual([
      'body.block.miner_pubkey: expected a value (required), got nothing',
      'body.block.coord.q: expected an integer, got 1.5',
      'body.block.pow_hash: expected at least 64 characters, got 2 characters',
      'body.block.pow_hash: expected a string matching ^[0-9a-f]{64}$, got "AB"',
      'body.block.nonce: expected a number >= 0, got -1',
    ]);
  });

  it('summarises "at least one of" alternatives', async () => {
    const { c } = offline();
    const error = await problemOf(c.admin.setConfig({}));
    expect(error.problems.map((p) => p.message)).toEqual([
      'body: expected an object with at least one of difficulty, max_tensor_dim, pool_strategy, hexchain_difficulty, challenge_ttl_s, got an empty object',
    ]);
  });

  it('checks queries and path parameters', async () => {
    const { c } = offline();
    const query = await problemOf(c.hexchain.lattice({ limit: 0 }));
    expect(query.shortMessage).toBe('hexLattice: query.limit: expected a number >= 1, got 0');
    const params = await problemOf(c.miners.get('not-a-key'));
    expect(params.shortMessage).toBe(
      'getMiner: params.pubkey: expected at least 64 characters, got 9 characters (and 1 more)',
    );
  });

  it('refuses a part the route does not take', () => {
    expect(() => checkInput(ROUTES.getHealth, { body: { x: 1 } })).toThrow(
      'body: expected none (GET /health takes no body), got object',
    );
  });
});

describe('coordinates (parseCoord)', () => {
  it('refuses q + r + s != 0 in a path and in a body', async () => {
    const { c, requests } = offline();
    const inPath = await problemOf(c.hexchain.block({ q: 1, r: 1, s: 1 }));
    expect(inPath.shortMessage).toBe('hexBlock: params: expected q + r + s = 0, got q=1 r=1 s=1');
    const inBody = await problemOf(
      c.hexchain.submit({
        challenge_id: 'h-1',
        block: { coord: { q: 2, r: 0, s: 0 }, pow_hash: 'ab'.repeat(32), nonce: 1, miner_pubkey: KEY },
      }),
    );
    expect(inBody.shortMessage).toBe('hexSubmit: body.block.coord: expected q + r + s = 0, got q=2 r=0 s=0');
    expect(requests).toEqual([]);
  });
});

describe('amounts (parseAmount)', () => {
  it('refuses more decimals than the token has', async () => {
    const { c } = offline();
    const stake = await problemOf(c.economy.stake({ amount: '1.0000000001', lock_period_days: 7 }));
    expect(stake.shortMessage).toBe(
      'stake: body.amount: expected at most 9 decimal places, got 10 in "1.0000000001"',
    );
    const swap = await problemOf(
      c.economy.swapExecute({ from_token: 'PTM', to_token: 'USDC', amount: '1', min_received: '0.1234567' }),
    );
    expect(swap.shortMessage).toBe(
      'swapExecute: body.min_received: expected at most 6 decimal places, got 7 in "0.1234567"',
    );
  });

  it('refuses a token the protocol does not list', async () => {
    const { c } = offline();
    const error = await problemOf(
      c.economy.vaultDeposit({ token: 'DOGE', amount: '1', unlock_at: 2_000_000_000 }),
    );
    expect(error.shortMessage).toBe('vaultDeposit: body.token: expected one of PTM, SOL, USDC, got "DOGE"');
  });

  it('checks prices to 18 decimals', async () => {
    const { c } = offline();
    const error = await problemOf(
      c.economy.placeOrder({ type: 'buy', token: 'PTM', amount: '1', price: '0.1234567890123456789' }),
    );
    expect(error.problems.map((p) => p.path)).toEqual(['body.price']);
  });

  it('lets a valid amount through to the network', async () => {
    const { c, requests } = offline();
    // No interceptor: the MockAgent refuses the request, after the checks passed. (A stake is an
    // exactly-once operation, which the client would resend identically: no retries here.)
    await expect(
      c.economy.stake({ amount: '12.5', lock_period_days: 30 }, { retries: 0 }),
    ).rejects.toMatchObject({
      name: 'NetworkError',
    });
    expect(requests).toHaveLength(1);
  });

  it('can be switched off', async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    track(agent);
    const c = client({ url: 'http://v.test', dispatcher: agent, validateInput: false });
    await expect(c.hexchain.block({ q: 1, r: 1, s: 1 })).rejects.toMatchObject({ name: 'NetworkError' });
  });
});
