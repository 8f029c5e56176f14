import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { steppedClock } from '../../../test-support/clock.ts';
import { run } from '../src/index.js';
import type { MiningSession } from '../src/session.js';
import { cleanup, runCli, tempHome, testIo, testKey, testValidator, waitFor } from './helpers.js';

/** `miner mine --pool`: membership, shares against the share target, --json share events. */

function startMine(argv: string[], env: Record<string, string | undefined>) {
  const io = testIo(env);
  let session: MiningSession | undefined;
  const done = run(['mine', '--threads', '1', ...argv], io, {
    session: { retryDelayMs: 50 },
    onSession: (s) => {
      session = s;
    },
  });
  cleanup(async () => {
    io.controller.abort();
    await done;
  });
  return {
    io,
    session: () => session,
    stop: async () => {
      io.controller.abort();
      return done;
    },
  };
}

describe('miner mine --pool', () => {
  test('says how to join when the key is not a member, and that a solo validator has no pool', async () => {
    const { url } = await testValidator({ poolStrategy: 'pplns' });
    const { env } = await tempHome();
    await testKey(join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.key'), [url]);
    const res = await runCli(['mine', '--url', url, '--pool', '--no-tui'], env);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('is not a member of the pool on');
    expect(res.stderr).toContain('miner mine --pool --stake <ptm> (minimum_stake 0 PTM)');

    const solo = await testValidator();
    const other = (await tempHome()).env;
    await testKey(join(other.XDG_CONFIG_HOME!, 'tensormine', 'miner.key'), [solo.url]);
    const off = await runCli(['mine', '--url', solo.url, '--pool', '--stake', '0', '--no-tui'], other);
    expect(off.code).not.toBe(0);
    expect(off.stderr).toContain('runs no pool (pool_strategy solo)');
  });

  test('joins with --stake, mines shares at the share target, reports them as --json events', async () => {
    // A share interval of 100 ms: a new native member (2 MH/s nominal) starts at share
    // difficulty 200 000, well below the block difficulty (2^24), so its shares are shares.
    // The validator's clock follows the real one in 30 s steps (the miner's signed requests
    // carry real timestamps): vardiff, which lowers the difficulty after 4 intervals without a
    // share, sees at most one such stretch per 30 s, so a loaded machine mining slowly does not
    // drive it to the floor (16) and drown in shares.
    const clock = steppedClock(30_000);
    const { url, validator } = await testValidator({
      poolStrategy: 'pplns',
      hexDifficulty: 1n << 24n,
      poolShareIntervalMs: 100n,
      now: clock.now,
    });
    const { env } = await tempHome();
    const signer = await testKey(join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.key'), [url]);
    const m = startMine(['--url', url, '--pool', '--stake', '0', '--json'], env);
    await waitFor(
      () => (m.io.stdout.text.match(/"kind":"share"/g) ?? []).length >= 3,
      'three accepted shares',
      undefined,
      () => m.io.stdout.text + m.io.stderr.text,
    );
    const events = m.io.stdout.text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const job = events.find((e) => e.type === 'job');
    // The job is sized to the share target: one share per interval at the nominal rate, or a
    // quarter of it when the first challenge came 4 intervals (400 ms) after the join (vardiff).
    expect([200_000, 50_000]).toContain(job?.difficulty);
    const share = events.find((e) => e.type === 'accepted');
    expect(share?.details).toMatchObject({
      accepted: true,
      kind: 'share',
      share_difficulty: job?.difficulty,
    });
    const pool = m.session()?.snapshot().pool;
    expect(pool?.sharesAccepted).toBeGreaterThanOrEqual(3);
    expect(pool?.shareDifficulty).toBeGreaterThanOrEqual(12_500); // vardiff may have raised it
    expect(await m.stop()).toBe(0);
    const member = (await validator.inject(`/pool/members/${signer.publicKeyHex}`)).json();
    expect(member).toMatchObject({ member: true, stake: '0' });
    expect(member.shares_accepted).toBeGreaterThanOrEqual(3);
  });
});
