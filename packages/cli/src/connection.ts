import { createClient, type Signer, type TensormineClient } from '@tensormine/client';
import { CliError, describeError, failureReason, isUnreachable } from './errors.js';
import { shellQuote } from './paths.js';
import type { MinerSettings } from './settings.js';
import { ClientWorkSource } from './work-source.js';

/**
 * The network side of a mining run: the SDK client on the validators, the WorkSource over it,
 * the key checked (and registered where it is missing) on every validator, and the pool joined
 * with `--pool`. `miner mine` opens one at start; the control API opens a new one when the
 * validators or the pool membership change, and keeps the old one if this fails.
 */
export interface Connection {
  readonly client: TensormineClient;
  readonly source: ClientWorkSource;
  /** Lines for the start-up summary (registrations done, validators not checked, the pool). */
  readonly notes: readonly string[];
}

/**
 * Connects to the validators of `settings` (or `urls`: the local validator's).
 * `answerRequired`: a change at run time is refused when none of the validators answers (at
 * start, mining waits for one).
 * @throws CliError for everything the user can fix (exit codes in errors.ts); nothing is left open
 */
export async function connect(
  settings: MinerSettings,
  signer: Signer,
  urls: readonly string[],
  local: boolean,
  answerRequired = false,
): Promise<Connection> {
  const client = createClient({ urls: [...urls], signer, protocol: settings.protocol });
  const registerCommand = (to: readonly string[]) =>
    `miner register ${to.map((u) => `--url ${shellQuote(u)}`).join(' ')} --key ${shellQuote(settings.key)}${settings.deviceType === 'native' ? '' : ` --device-type ${settings.deviceType}`}`;
  const source = new ClientWorkSource({
    client,
    signer,
    urls,
    deviceType: settings.deviceType,
    registerCommand,
    pool: settings.pool,
  });
  try {
    const notes: string[] = [];
    if (local) {
      await client.miners.register({ device_type: settings.deviceType });
    } else {
      notes.push(...(await checkRegistered(client, source, signer, urls, registerCommand, answerRequired)));
    }
    if (settings.pool) notes.push(await ensurePoolMember(client, signer, settings, urls));
    return { client, source, notes };
  } catch (error) {
    source.close();
    await client.close().catch(() => {});
    throw error;
  }
}

/**
 * Before mining on remote validators: is the key registered on every one of them? Failover
 * needs the key on each (the SDK moves to the next validator, which refuses an unknown key).
 *   - registered nowhere: an error with the exact `miner register` command (exit 4);
 *   - registered on some: the key is registered on the others too, with the device type it has
 *     where it is registered, and a banner line says so;
 *   - a validator that does not answer: a note; the work source registers the key there when
 *     it answers and refuses the key (see ClientWorkSource's `autoRegister`).
 */
async function checkRegistered(
  client: TensormineClient,
  source: ClientWorkSource,
  signer: Signer,
  urls: readonly string[],
  registerCommand: (urls: readonly string[]) => string,
  answerRequired: boolean,
): Promise<string[]> {
  const checks = await Promise.all(
    urls.map(async (url) => {
      try {
        const account = await client.miners.get(signer.publicKeyHex, { endpoint: url, retries: 0 });
        return { url, account, reason: undefined };
      } catch (error) {
        if (isUnreachable(error)) return { url, account: undefined, reason: failureReason(error) };
        throw error;
      }
    }),
  );
  const registered = checks.filter((c) => c.account?.registered === true);
  const missing = checks.filter((c) => c.account !== undefined && !c.account.registered);
  const unreachable = checks.filter((c) => c.account === undefined);
  if (registered.length === 0 && missing.length > 0) {
    const where = missing.map((c) => c.url);
    throw new CliError(
      'not_registered',
      `key ${signer.publicKeyHex} is not registered on ${where.join(', ')}`,
      [`register it with: ${registerCommand(urls)}`],
    );
  }
  if (unreachable.length === urls.length) {
    const tried = await source.probe();
    const list = tried.map((t) => `${t.url} (${t.reason})`).join(', ');
    if (answerRequired) throw new CliError('unreachable', `no validator answers (tried ${list})`);
    return [` * note       no validator answers yet (tried ${list}); mining starts when one does`];
  }
  const notes: string[] = [];
  const reference = registered[0];
  const deviceType = reference?.account?.device_type ?? undefined;
  if (deviceType) source.autoRegister = deviceType;
  for (const m of missing) {
    await client.miners.register(deviceType ? { device_type: deviceType } : {}, { endpoint: m.url });
    notes.push(
      ` * register   the key was registered on ${reference!.url} only: registered it on ${m.url} too (failover needs it on every validator)`,
    );
  }
  if (unreachable.length > 0) {
    notes.push(
      ` * note       could not check the key on ${unreachable.map((c) => `${c.url} (${c.reason})`).join(', ')}; it is registered there when that validator answers`,
    );
  }
  return notes;
}

/**
 * `mine --pool`: the key must be a member of the validator's pool. A member goes on; a key that
 * is not joins with --stake; without --stake the user is told how.
 */
async function ensurePoolMember(
  client: TensormineClient,
  signer: Signer,
  settings: MinerSettings,
  urls: readonly string[],
): Promise<string> {
  const url = client.endpoints().find((e) => e.active)?.url ?? urls[0]!;
  try {
    const info = await client.pool.info();
    if (info.type === 'solo') {
      throw new CliError('usage', `${url} runs no pool (pool_strategy solo)`, [
        'mine solo: leave out --pool',
        'or, as its operator: POST /admin/config {"pool_strategy": "pplns"}',
      ]);
    }
    const member = await client.pool.member(signer.publicKeyHex);
    const terms = `fee ${(info.fee_bps / 100).toFixed(2)} %, PPLNS window ${info.pplns_window_factor} x D`;
    if (member.member) {
      return ` * pool       member of ${info.type} pool on ${url} (stake ${member.stake} PTM, paid ${member.paid_total} PTM; ${terms})`;
    }
    if (settings.stake === undefined) {
      throw new CliError('usage', `key ${signer.publicKeyHex} is not a member of the pool on ${url}`, [
        `join with a stake: miner mine --pool --stake <ptm> (minimum_stake ${info.minimum_stake} PTM)`,
      ]);
    }
    const joined = await client.pool.join({ stake_amount: settings.stake });
    return ` * pool       joined the ${info.type} pool on ${url} with stake ${joined.stake_amount} PTM (${terms})`;
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError('failure', `could not join the pool on ${url}: ${describeError(error)}`, [], {
      cause: error,
    });
  }
}
