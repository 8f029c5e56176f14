import {
  type Coord,
  coordEquals,
  fromHex,
  parseAmount,
  proofFromWork,
  type Receipt,
  type SignedHexSubmission,
  type SignedProof,
  verifyReceipt,
} from '@tensormine/protocol';
import { describe, expect, it } from 'vitest';
import {
  type HexWork,
  InvalidInputError,
  ProtocolMismatchError,
  type RequestEvent,
  Signer,
  solveWork,
  type TensorWork,
  ValidatorError,
} from '../src/index.js';
import { client, startValidator } from './helpers.js';

/** The client against the real validator, in process on port 0: every route it serves. */

function requestsOf(c: ReturnType<typeof client>): RequestEvent[] {
  const seen: RequestEvent[] = [];
  c.on('request', (e) => seen.push(e));
  return seen;
}

describe('node', () => {
  it('reads health, status and peers', async () => {
    const { url, validator } = await startValidator();
    const c = client({ url });
    const health = await c.node.health();
    expect(health).toMatchObject({ status: 'ok', version: '4.1', protocols: ['4.0', '4.1'] });
    expect(health.node_pubkey).toMatch(/^[0-9a-f]{64}$/);
    const status = await c.node.status();
    expect(status).toMatchObject({ node_id: validator.context.nodeId, difficulty: 2, max_tensor_dim: 8 });
    expect(status.hexchain).toMatchObject({ enabled: true, occupied: 1 });
    expect(await c.node.peers()).toEqual({
      peers: [],
      total_nodes: 1,
      synced: true,
      mode: 'local_only',
      node_id: validator.context.nodeId,
    });
  });

  it('reads the pool info', async () => {
    const { url } = await startValidator();
    const pool = await client({ url }).pool.info();
    expect(pool).toMatchObject({ type: 'solo', miners: 0, token: 'PTM' });
  });
});

describe('miners and devices', () => {
  it('registers the signer (a signed request), then reads the account and the fleet', async () => {
    const { url } = await startValidator();
    const signer = Signer.generate();
    const c = client({ url, signer });
    const registered = await c.miners.register({ device_type: 'esp32', port: 9000 });
    expect(registered).toMatchObject({
      registered: true,
      pubkey: signer.publicKeyHex,
      device_type: 'esp32',
      port: 9000,
    });
    const account = await c.miners.get();
    expect(account).toMatchObject({ pubkey: signer.publicKeyHex, registered: true, device_type: 'esp32' });
    const fleet = await c.miners.devices({ device_type: 'esp32' });
    expect(fleet.total).toBe(1);
    expect(fleet.by_type.esp32).toBe(1);
    expect(fleet.devices.map((d) => d.pubkey)).toEqual([signer.publicKeyHex]);
  });

  it('signs with the signer of the call when given', async () => {
    const { url } = await startValidator();
    const board = Signer.generate();
    const c = client({ url });
    const result = await c.miners.register({ device_type: 'esp8266' }, { signer: board });
    expect(result.pubkey).toBe(board.publicKeyHex);
    expect((await c.miners.get(board.publicKeyHex)).device_type).toBe('esp8266');
  });

  it('explains that an unregistered key gets no work', async () => {
    const { url } = await startValidator();
    const signer = Signer.generate();
    const error = (await client({ url, signer })
      .getWork()
      .catch((e: unknown) => e)) as ValidatorError;
    expect(error).toBeInstanceOf(ValidatorError);
    expect(error.code).toBe('miner_not_registered');
    expect(error.status).toBe(403);
    expect(error.serverMessage).toBe(
      `miner_pubkey: ${signer.publicKeyHex} is not registered; register it with POST /devices/register`,
    );
  });
});

describe('a v4.1 mining round', () => {
  it('registers, gets a lattice challenge, solves it with the reference solver and submits the signed block', async () => {
    const { url } = await startValidator();
    const signer = Signer.generate();
    const c = client({ url, signer });
    await c.miners.register();
    const work = await c.getWork();
    expect(work.version).toBe('4.1');
    const hexWork = work as HexWork;
    expect(hexWork.endpoint).toBe(url);
    expect(hexWork.challenge.parents.length).toBeGreaterThan(0);
    const solution = solveWork(work, signer, { maxIterations: 1_000_000 });
    expect(solution).toBeDefined();
    const submitted = await c.submitWork(hexWork, solution!);
    expect(submitted.version).toBe('4.1');
    expect(submitted.result).toMatchObject({ accepted: true, depth: 1, reward: '1', token: 'PTM' });
    expect(coordEquals(submitted.result.coord, hexWork.challenge.coord)).toBe(true);

    // The lattice, the block and the status show it.
    const status = await c.hexchain.status();
    expect(status.occupied).toBe(2);
    const page = await c.hexchain.lattice({ limit: 10 });
    expect(page.total).toBe(1);
    expect(page.blocks[0]!.block_hash).toBe(submitted.result.block_hash);
    const block = await c.hexchain.block(hexWork.challenge.coord);
    expect(block).toMatchObject({ miner_pubkey: signer.publicKeyHex, nonce: solution!.nonce, depth: 1 });
    const account = await c.miners.get();
    expect(account.blocks_accepted).toBe(1);

    // The same block again (a retry after a lost answer): the original acceptance.
    const replay = await c.submitWork(hexWork, solution!);
    expect(replay.result).toEqual(submitted.result);
    expect((await c.miners.get()).blocks_accepted).toBe(1);
  });

  it('reports a nonce that misses the target with the validator’s reason', async () => {
    const { url } = await startValidator({ hexDifficulty: 1n << 40n });
    const signer = Signer.generate();
    const c = client({ url, signer });
    await c.miners.register();
    const work = await c.getWork();
    const error = (await c.submitWork(work, { nonce: 0 }).catch((e: unknown) => e)) as ValidatorError;
    expect(error).toMatchObject({ name: 'ValidatorError', code: 'pow_above_target', status: 422 });
    expect(error.details).toHaveProperty('target');
  });

  it('answers a free cell with block_not_found, and checks a coordinate before sending it', async () => {
    const { url } = await startValidator();
    const c = client({ url });
    const seen = requestsOf(c);
    await expect(c.hexchain.block({ q: 5, r: -5, s: 0 })).rejects.toMatchObject({
      code: 'block_not_found',
      status: 404,
    });
    const bad = (await c.hexchain
      .block({ q: 1, r: 1, s: 1 } as Coord)
      .catch((e: unknown) => e)) as InvalidInputError;
    expect(bad).toBeInstanceOf(InvalidInputError);
    expect(bad.shortMessage).toBe('hexBlock: params: expected q + r + s = 0, got q=1 r=1 s=1');
    expect(seen).toHaveLength(1);
  });

  it('reaches any route through the generic request()', async () => {
    const { url } = await startValidator();
    const c = client({ url });
    const page = await c.request('hexLattice', { query: { limit: 1 } });
    expect(page).toEqual({ blocks: [], next_cursor: null, total: 0 });
    expect((await c.request('getHealth')).service).toBe('tensormine-validator');
  });
});

/** Blocks the event loop (a synchronous solve) for `ms`. */
function blockEventLoop(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy
  }
}

describe('a found result is not lost on a dead keep-alive socket', () => {
  for (const version of ['4.1', '4.0'] as const) {
    it(`v${version}: a solve that outlasts the server's keep-alive; the submission is resent and accepted`, async () => {
      const { url, validator } = await startValidator(version === '4.0' ? { hexchain: false } : {});
      // The server closes idle connections after 3 s (Fastify's default is 72 s) and says so
      // (Keep-Alive: timeout=3); the SDK's pool keeps a socket for that minus 2 s, but its
      // timers cannot run while a solve blocks the event loop, as for a long synchronous solve.
      const server = validator.app.server as typeof validator.app.server & {
        keepAliveTimeoutBuffer?: number;
      };
      server.keepAliveTimeout = 3000;
      server.keepAliveTimeoutBuffer = 0;
      const signer = Signer.generate();
      const c = client({ url, signer });
      const retries: string[] = [];
      c.on('retry', (e) => retries.push(`${e.operationId}: ${e.error.code}`));
      await c.miners.register();
      const work = await c.getWork(version === '4.0' ? { deviceType: 'esp8266' } : {});
      const solution = solveWork(work, signer, { maxIterations: 1_000_000 });
      // The pooled socket is closed by the server while this process cannot notice.
      blockEventLoop(3400);
      const submitted = await c.submitWork(work, solution!);
      expect(submitted.result.accepted).toBe(true);
      expect(retries).toEqual([`${version === '4.0' ? 'submitProof' : 'hexSubmit'}: network_error`]);
      const account = await c.miners.get();
      expect(version === '4.0' ? account.proofs_accepted : account.blocks_accepted).toBe(1);
    });
  }
});

describe('a v4.0 mining round', () => {
  it('mines, submits a signed proof, verifies the receipt and finds the reward in the ledger', async () => {
    const { url } = await startValidator({ hexchain: false });
    const signer = Signer.generate();
    const c = client({ url, signer });
    await c.miners.register();
    const work = await c.getWork({ deviceType: 'esp8266', slot: 1234, slotHash: 'slot-1234' });
    expect(work.version).toBe('4.0');
    const tensorWork = work as TensorWork;
    expect(tensorWork.challenge).toMatchObject({ slot: 1234, slot_hash: 'slot-1234' });
    const solution = solveWork(work, signer, { maxIterations: 200_000 });
    const submitted = await c.submitWork(tensorWork, solution!);
    const { result } = submitted;
    expect(result).toMatchObject({ accepted: true, miner_pubkey: signer.publicKeyHex, token: 'PTM' });

    const health = await c.node.health();
    const entries = await c.economy.ledger({ pubkey: signer.publicKeyHex });
    expect(entries.entries).toHaveLength(1);
    expect(entries.entries[0]).toMatchObject({ type: 'mining_reward', amount: result.reward, token: 'PTM' });
    const receipt: Receipt = {
      challengeId: result.challenge_id,
      minerPubkey: result.miner_pubkey,
      computationHash: submitted.proof.computation_hash,
      ledgerEntryId: BigInt(result.ledger_entry_id),
      rewardMinor: parseAmount(result.reward, 'PTM'),
      acceptedAt: result.accepted_at,
    };
    expect(verifyReceipt(receipt, result.tx_sig, fromHex(health.node_pubkey))).toBe(true);

    // The same proof again (a retry after a lost answer): the original acceptance, credited once.
    const again = await c.submitWork(tensorWork, solution!);
    expect(again.result).toEqual(result);
    expect((await c.economy.ledger({ pubkey: signer.publicKeyHex })).entries).toHaveLength(1);
  });

  it('is used when forced, also on a validator that serves v4.1', async () => {
    const { url } = await startValidator();
    const signer = Signer.generate();
    const c = client({ url, signer, protocol: '4.0' });
    await c.miners.register();
    const seen = requestsOf(c);
    const work = await c.getWork();
    expect(work.version).toBe('4.0');
    expect(seen.map((r) => r.operationId)).toEqual(['requestChallenge']);
  });
});

describe('a solution built and signed already (submitSigned)', () => {
  it('v4.1: sends the block submission as it is and answers as submitWork does', async () => {
    const { url } = await startValidator();
    const signer = Signer.generate();
    const c = client({ url, signer });
    await c.miners.register();
    const work = (await c.getWork()) as HexWork;
    const solution = solveWork(work, signer, { maxIterations: 1_000_000 })!;
    const signed = signer.buildHexSubmission({
      challengeId: work.challenge.id,
      challengeHash: fromHex(work.challenge.challenge_hash),
      coord: work.challenge.coord,
      nonce: solution.nonce,
    }) as SignedHexSubmission;
    const seen = requestsOf(c);
    const submitted = await c.submitSigned(work, signed);
    expect(submitted).toMatchObject({ version: '4.1', endpoint: url });
    expect(submitted.submission).toBe(signed);
    expect(submitted.result).toMatchObject({ accepted: true, depth: 1, reward: '1', token: 'PTM' });
    expect(seen.map((e) => e.operationId)).toEqual(['hexSubmit']);
    // submitWork builds the same body from the nonce: the original acceptance.
    expect((await c.submitWork(work, solution)).result).toEqual(submitted.result);
  });

  it('v4.0: sends the signed proof as it is (its work is not computed again)', async () => {
    const { url } = await startValidator({ hexchain: false });
    const signer = Signer.generate();
    const c = client({ url, signer });
    await c.miners.register();
    const work = (await c.getWork({ deviceType: 'esp8266' })) as TensorWork;
    const solution = solveWork(work, signer, { maxIterations: 200_000 })!;
    const proof = proofFromWork(
      work.challenge.challenge_id,
      fromHex(work.challenge.hash),
      signer.publicKey,
      solution.nonce,
      solution.work!,
    );
    const signature = signer.signProof(proof);
    const submitted = await c.submitSigned(work, { proof, signature });
    expect(submitted).toMatchObject({ version: '4.0', endpoint: url });
    expect(submitted.proof).toBe(proof);
    expect(submitted.signature).toBe(signature);
    expect(submitted.result).toMatchObject({ accepted: true, miner_pubkey: signer.publicKeyHex });
  });

  it('refuses a body that answers another challenge, before sending it', async () => {
    const { url } = await startValidator();
    const signer = Signer.generate();
    const c = client({ url, signer });
    await c.miners.register();
    const work = (await c.getWork()) as HexWork;
    const other = (await c.getWork()) as HexWork;
    const signed = signer.buildHexSubmission({
      challengeId: other.challenge.id,
      challengeHash: fromHex(other.challenge.challenge_hash),
      coord: other.challenge.coord,
      nonce: 0,
    }) as SignedHexSubmission;
    const seen = requestsOf(c);
    const error = (await c.submitSigned(work, signed).catch((e: unknown) => e)) as InvalidInputError;
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error.problems).toEqual([
      {
        path: 'challenge_id',
        message: `challenge_id: expected ${JSON.stringify(work.challenge.id)} (the challenge of the work), got ${JSON.stringify(other.challenge.id)}`,
      },
    ]);
    expect(seen).toEqual([]);
  });

  it('v4.0: refuses a body that is not a proof of the work, or a work of no known version, before sending it', async () => {
    const { url } = await startValidator({ hexchain: false });
    const signer = Signer.generate();
    const c = client({ url, signer });
    await c.miners.register();
    const work = (await c.getWork({ deviceType: 'esp8266' })) as TensorWork;
    const seen = requestsOf(c);
    const hexBody = { challenge_id: work.challenge.challenge_id } as unknown as SignedProof;
    const error = (await c.submitSigned(work, hexBody).catch((e: unknown) => e)) as InvalidInputError;
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error.problems).toEqual([
      {
        path: 'proof.challenge_id',
        message: `proof.challenge_id: expected ${JSON.stringify(work.challenge.challenge_id)} (the challenge of the work), got none`,
      },
    ]);
    const future = { ...work, version: '5.0' } as unknown as TensorWork;
    await expect(c.submitSigned(future, hexBody)).rejects.toThrow(
      new ProtocolMismatchError('work.version: expected "4.0" or "4.1", got "5.0"'),
    );
    expect(seen).toEqual([]);
  });
});

describe('hexchain detection', () => {
  it('picks v4.1 against a validator with the hexchain, probing once per validator', async () => {
    const { url } = await startValidator();
    const signer = Signer.generate();
    const c = client({ url, signer });
    await c.miners.register();
    const versions: string[] = [];
    c.on('protocol', (e) => versions.push(`${e.endpoint} ${e.version}`));
    const seen = requestsOf(c);
    expect(await c.detectProtocol()).toBe('4.1');
    await c.getWork();
    await c.getWork();
    expect(seen.map((r) => r.operationId)).toEqual(['hexStatus', 'hexChallenge', 'hexChallenge']);
    expect(versions).toEqual([`${url} 4.1`]);
  });

  it('picks v4.0 against createValidator({ hexchain: false })', async () => {
    const { url } = await startValidator({ hexchain: false });
    const c = client({ url });
    expect(await c.detectProtocol()).toBe('4.0');
    const work = await c.getWork({ minerPubkey: false });
    expect(work.version).toBe('4.0');
  });

  it('refuses v4.1 forced on a validator without the hexchain', async () => {
    const { url } = await startValidator({ hexchain: false });
    const c = client({ url, protocol: '4.1' });
    const error = await c.getWork().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolMismatchError);
    expect((error as ProtocolMismatchError).shortMessage).toBe(
      `protocol 4.1 was forced, but ${url} does not serve the hexchain endpoints (HTTP 404 on /api/hexchain/challenge)`,
    );
  });

  it('detects again when the validator behind a URL is replaced by one without the hexchain', async () => {
    const first = await startValidator();
    const port = Number(new URL(first.url).port);
    const c = client({ url: first.url });
    expect(await c.detectProtocol()).toBe('4.1');
    await first.validator.close();
    const second = await startValidator({ hexchain: false }, { port });
    expect(second.url).toBe(first.url);
    const work = await c.getWork({ minerPubkey: false });
    expect(work.version).toBe('4.0');
  });
});

describe('admin', () => {
  it('reads metrics and config, and changes the config', async () => {
    const { url, validator } = await startValidator();
    const c = client({ url, adminToken: validator.adminToken });
    const metrics = await c.admin.metrics();
    expect(metrics.challenges_issued).toBe(0);
    expect(await c.admin.config()).toMatchObject({ difficulty: 2, max_tensor_dim: 8, pool_strategy: 'solo' });
    const changed = await c.admin.setConfig({ difficulty: 3, hexchain_difficulty: 4096 });
    expect(changed).toMatchObject({ applied: true, config: { difficulty: 3, hexchain_difficulty: 4096 } });
    expect((await c.admin.config()).difficulty).toBe(3);
  });

  it('maps a wrong token to unauthorized, and an empty change to a local error', async () => {
    const { url } = await startValidator();
    const c = client({ url, adminToken: 'not-the-admin-token' });
    await expect(c.admin.metrics()).rejects.toMatchObject({
      name: 'ValidatorError',
      code: 'unauthorized',
      status: 401,
    });
    await expect(c.admin.setConfig({})).rejects.toThrow(
      'setAdminConfig: body: expected an object with at least one of difficulty, max_tensor_dim, pool_strategy, hexchain_difficulty, challenge_ttl_s, got an empty object',
    );
  });
});
