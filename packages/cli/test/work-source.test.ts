import { createClient, Signer } from '@tensormine/client';
import { type FoundResult, type HexchainJob, resultFromNonce, signFound } from '@tensormine/miner';
import { encodeHeader, hashMeetsTarget, hexPowHash } from '@tensormine/protocol';
import { describe, expect, test } from 'vitest';
import { ClientWorkSource } from '../src/work-source.js';
import { cleanup, closedUrl, testValidator, waitFor } from './helpers.js';

function source(urls: string[], signer: Signer, latticeWatchMs = 0, latticeEvents = false): ClientWorkSource {
  const client = createClient({ urls, signer, healthCheckIntervalMs: 0 });
  cleanup(() => client.close());
  const s = new ClientWorkSource({
    client,
    signer,
    urls,
    registerCommand: (url) => `miner register --url ${url}`,
    latticeWatchMs,
    latticeEvents,
  });
  cleanup(async () => s.close());
  return s;
}

/** Solves a hexchain job with the reference functions (low difficulty). */
/**
 * This miner gets work (watching the lattice by polling every `latticeWatchMs`, or through the
 * event stream); a rival asks for work until it is sent to the same cell, and mines it first.
 */
async function rivalTakesTheCell(
  latticeWatchMs: number,
  latticeEvents: boolean,
): Promise<{ job: HexchainJob; stale: Promise<string> }> {
  const { url, validator } = await testValidator({ hexDifficulty: 16n });
  const me = Signer.generate();
  const rival = Signer.generate();
  for (const signer of [me, rival]) {
    const c = createClient({ url, signer });
    await c.miners.register();
    await c.close();
  }
  const mine = source([url], me, latticeWatchMs, latticeEvents);
  const theirs = source([url], rival);
  const stale = new Promise<string>((resolve) => mine.once('stale', resolve));
  const job = (await mine.getWork()) as HexchainJob;
  // the stream opens (before the rival's block, or this miner would not hear of it)
  if (latticeEvents) await waitFor(() => validator.events.size === 1, "this miner's event stream open");
  let rivalJob = (await theirs.getWork()) as HexchainJob;
  while (rivalJob.coord.q !== job.coord.q || rivalJob.coord.r !== job.coord.r) {
    rivalJob = (await theirs.getWork()) as HexchainJob;
  }
  expect(await theirs.submit(solve(rivalJob))).toMatchObject({ status: 'accepted' });
  return { job, stale };
}

function solve(job: HexchainJob): FoundResult {
  for (let nonce = 0; ; nonce++) {
    const header = encodeHeader({
      coord: job.coord,
      challengeHash: job.challengeHash,
      minerPublicKey: job.minerPublicKey,
      nonce,
    });
    if (!hashMeetsTarget(hexPowHash(header), job.target)) continue;
    const verdict = resultFromNonce(job, nonce, { device: 'cpu' });
    if (!verdict.ok) throw new Error(verdict.message);
    return verdict.found;
  }
}

describe('ClientWorkSource', () => {
  test('turns the work of the client into a job and submits a result to the validator', async () => {
    const { url } = await testValidator({ hexDifficulty: 16n });
    const signer = Signer.generate();
    const s = source([url], signer);
    const client = createClient({ url, signer });
    await client.miners.register();
    await client.close();
    const job = await s.getWork();
    expect(job.kind).toBe('hexchain');
    expect(s.lastVersion).toBe('4.1');
    expect(s.url).toBe(url);
    const found = solve(job as HexchainJob);
    const outcome = await s.submit(found);
    expect(outcome).toMatchObject({ status: 'accepted', details: { accepted: true, depth: 1 } });
    expect(s.endpointOf(found)).toBe(url);
    // The same block again (a retry): the original acceptance.
    expect(await s.submit(found)).toEqual(outcome);
    // A rejection carries the validator's code.
    const forged = { ...found, nonce: found.nonce + 1 };
    expect(await s.submit(forged)).toMatchObject({ status: 'rejected' });
  });

  test("sends the miner's result as it is, signed once: nothing rebuilt or recomputed", async () => {
    const { url } = await testValidator({ hexDifficulty: 16n });
    const signer = Signer.generate();
    const client = createClient({ urls: [url], signer, healthCheckIntervalMs: 0 });
    cleanup(() => client.close());
    await client.miners.register();
    const sent: unknown[] = [];
    const submitSigned = client.submitSigned.bind(client);
    client.submitSigned = (work, signed, options) => {
      sent.push(signed);
      return submitSigned(work, signed, options);
    };
    client.submitWork = () => Promise.reject(new Error('the miner path must not rebuild the result'));
    const s = new ClientWorkSource({ client, signer, urls: [url], latticeWatchMs: 0 });
    cleanup(async () => s.close());
    const found = solve((await s.getWork()) as HexchainJob);
    expect(await s.submit(found)).toMatchObject({ status: 'accepted', details: { accepted: true } });
    expect(sent).toEqual([signFound(found, signer)]);
  });

  test("says the work is stale when another miner's block takes the target cell", async () => {
    const { job, stale } = await rivalTakesTheCell(20, false);
    expect(await stale).toMatch(
      new RegExp(
        `^the lattice moved: cell q=${job.coord.q} r=${job.coord.r} s=${job.coord.s} of ${job.challengeId} was taken by block [0-9a-f]{16}$`,
      ),
    );
  });

  test("hears of another miner's block on its cell from the event stream (no polling)", async () => {
    const { job, stale } = await rivalTakesTheCell(0, true);
    expect(await stale).toMatch(
      new RegExp(
        `^the lattice moved: cell q=${job.coord.q} r=${job.coord.r} s=${job.coord.s} of ${job.challengeId}`,
      ),
    );
  });

  test('does not call its own accepted block a lattice move', async () => {
    const { url } = await testValidator({ hexDifficulty: 16n });
    const signer = Signer.generate();
    const c = createClient({ url, signer });
    await c.miners.register();
    await c.close();
    const s = source([url], signer, 20, true);
    let stale = 0;
    s.on('stale', () => stale++);
    const job = (await s.getWork()) as HexchainJob;
    expect(await s.submit(solve(job))).toMatchObject({ status: 'accepted' });
    // The source stops watching the cell once it hears of the block taking it (its own, here):
    // from then on nothing can call it stale.
    const watching = () => (s as unknown as { watch: unknown }).watch !== undefined;
    await waitFor(() => !watching(), 'the source to stop watching the cell');
    expect(stale).toBe(0);
  });

  test('names every validator it tried and why when none answers', async () => {
    const a = await closedUrl();
    const b = await closedUrl();
    const s = source([a, b], Signer.generate());
    await expect(s.getWork()).rejects.toThrow(
      `no validator reachable: tried ${a} (ECONNREFUSED), ${b} (ECONNREFUSED)`,
    );
  });

  test('names the register command when the key is not registered', async () => {
    const { url } = await testValidator();
    const signer = Signer.generate();
    await expect(source([url], signer).getWork()).rejects.toThrow(
      `key ${signer.publicKeyHex} is not registered on ${url}: run miner register --url ${url}`,
    );
  });

  test('a result it cannot deliver is unavailable (the miner journals it), not rejected', async () => {
    const v = await testValidator({ hexDifficulty: 16n });
    const signer = Signer.generate();
    const s = source([v.url], signer);
    const client = createClient({ url: v.url, signer });
    await client.miners.register();
    await client.close();
    const found = solve((await s.getWork()) as HexchainJob);
    await v.validator.close();
    // Refused, or the kept-alive connection closed under the request: either way, not delivered.
    expect(await s.submit(found)).toMatchObject({
      status: 'unavailable',
      reason: expect.stringMatching(/^(ECONNREFUSED|other side closed)$/),
    });
  });

  test('submits a result from an earlier run (no work in memory) from what the result holds', async () => {
    const { url } = await testValidator({ hexDifficulty: 16n });
    const signer = Signer.generate();
    const client = createClient({ url, signer });
    await client.miners.register();
    await client.close();
    const found = solve((await source([url], signer).getWork()) as HexchainJob);
    expect(await source([url], signer).submit(found)).toMatchObject({ status: 'accepted' });
  });

  test('refuses a journaled result of another key without sending it', async () => {
    const { url } = await testValidator({ hexDifficulty: 16n });
    const signer = Signer.generate();
    const client = createClient({ url, signer });
    await client.miners.register();
    await client.close();
    const found = solve((await source([url], signer).getWork()) as HexchainJob);
    const other = Signer.generate();
    expect(await source([url], other).submit(found)).toEqual({
      status: 'rejected',
      code: 'pubkey_mismatch',
      message: `result ${found.id} was found for key ${signer.publicKeyHex}, not for this key ${other.publicKeyHex}`,
    });
  });
});
