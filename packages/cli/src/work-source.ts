import { EventEmitter } from 'node:events';
import {
  type ProtocolVersion,
  type Signer,
  type TensormineClient,
  ValidatorError,
  type Work,
} from '@tensormine/client';
import {
  type FoundResult,
  hexchainJob,
  type MiningJob,
  type MiningStrategy,
  POOL,
  SOLO,
  type SubmitOutcome,
  signFound,
  tensorJob,
  type WorkSource,
  type WorkSourceEvents,
} from '@tensormine/miner';
import {
  type ChallengeWire,
  type Coord,
  coordEquals,
  type DeviceType,
  formatAmount,
  type HexSubmissionInput,
  type PoolShareResult,
  parseAmount,
  type SignedHexSubmission,
} from '@tensormine/protocol';
import { describeError, failureReason, isUnreachable } from './errors.js';

/**
 * The miner's WorkSource on the SDK client: `getWork` asks the client for work (v4.1 where
 * the validator serves the hexchain, else v4.0; failover across the validators in order) and
 * turns it into a job for the engine; `submit` signs a result (the miner built and verified
 * it: `signFound` with the key's Signer) and sends that body as it is with the client's
 * `submitSigned`, to the validator that issued its work. Failures are explained for people:
 * when no validator answers, every URL is probed and named with its reason (ECONNREFUSED,
 * timeout, 503 ...); an unregistered key names the `miner register` command to run.
 */
export interface ClientWorkSourceOptions {
  readonly client: TensormineClient;
  readonly signer: Signer;
  /** The validators, primary first (as given to the client). */
  readonly urls: readonly string[];
  /** v4.0: the device type challenges are sized for (a registered key's own type wins). */
  readonly deviceType?: DeviceType;
  /** The command to suggest when the key is not registered on these validators. */
  readonly registerCommand?: (urls: readonly string[]) => string;
  /** How long each URL is probed when explaining an outage, ms (default 3000). */
  readonly probeTimeoutMs?: number;
  /**
   * While a v4.1 job is mined, how often its target cell is checked, ms (default 2000; 0 turns
   * the watch off). When another miner's block takes the cell, the work is stale at once
   * instead of at its expiry.
   */
  readonly latticeWatchMs?: number;
  /**
   * Follow the validator's push channel (GET /api/hexchain/events, default true): a block on
   * the job's cell makes the work stale as soon as it is accepted. While the stream is open the
   * cell watch does not poll; it takes over whenever the stream is down.
   */
  readonly latticeEvents?: boolean;
  /**
   * Pooled mining (`mine --pool`): results are shares, sent to POST /api/hexchain/pool/share;
   * the job goes on after each share; the pool and the member are polled for the TUI.
   */
  readonly pool?: boolean;
  /** How often the pool and the member's earnings are polled, ms (default 10 000). */
  readonly poolPollMs?: number;
}

/** What `mine --pool` shows: share counts and the member's earnings (docs/cli.md). */
export interface PoolView {
  readonly sharesAccepted: number;
  readonly sharesStale: number;
  readonly sharesRejected: number;
  readonly blocks: number;
  /** The share difficulty of the current job. */
  readonly shareDifficulty: number | undefined;
  /** The pool's last block: height, finder (yours?) and when. */
  readonly lastBlock:
    | { readonly height: number; readonly mine: boolean; readonly foundAt: number }
    | undefined;
  /** PTM the member would be paid for a block now, and has been paid in all. */
  readonly estimated: string | undefined;
  readonly paid: string | undefined;
}

/** Pool events for the session's lines and `--json`: a pool block and a payout. */
export type PoolEvent =
  | {
      readonly type: 'pool-block';
      readonly height: number;
      readonly blockHash: string;
      readonly finder: string;
      readonly mine: boolean;
      readonly reward: string;
      readonly fee: string;
    }
  | { readonly type: 'payout'; readonly amount: string; readonly paidTotal: string };

export interface ClientWorkSourceEvents extends WorkSourceEvents {
  pool: [event: PoolEvent];
}

/** Share submissions sent at once; the others wait their turn. */
const SHARES_IN_FLIGHT = 8;

/** A failed submission as an outcome: a 4xx is a rejection, anything else is "try later" at `endpoint`. */
function outcomeOf(error: unknown, endpoint: string): SubmitOutcome {
  if (error instanceof ValidatorError && error.status !== undefined && error.status < 500) {
    return { status: 'rejected', code: error.code, message: error.serverMessage ?? error.shortMessage };
  }
  return { status: 'unavailable', reason: failureReason(error), endpoint };
}

/** How many issued works are remembered for their submissions. */
const RECENT_WORK = 64;

export class ClientWorkSource extends EventEmitter<ClientWorkSourceEvents> implements WorkSource {
  private readonly options: ClientWorkSourceOptions;
  private poolView: {
    -readonly [K in keyof PoolView]: PoolView[K];
  } = {
    sharesAccepted: 0,
    sharesStale: 0,
    sharesRejected: 0,
    blocks: 0,
    shareDifficulty: undefined,
    lastBlock: undefined,
    estimated: undefined,
    paid: undefined,
  };
  private poolTimer: NodeJS.Timeout | undefined;
  private sharesInFlight = 0;
  private readonly shareWaiters: (() => void)[] = [];
  private lastPaidMinor: bigint | undefined;
  private lastPoolHeight: number | undefined;
  private readonly works = new Map<string, Work>();
  /** The protocol version and validator of the last work. */
  lastVersion: ProtocolVersion | undefined;
  lastEndpoint: string | undefined;
  /**
   * The device type the key is registered with elsewhere: a validator of the list that refuses
   * the key (miner_not_registered, e.g. one that was down at start) gets it registered, once,
   * and the request is repeated. Undefined: no registration on the miner's behalf.
   */
  autoRegister: DeviceType | undefined;
  private readonly autoRegistered = new Set<string>();
  /** The watch of the current v4.1 job's target cell. */
  private watch: NodeJS.Timeout | undefined;
  /** The current v4.1 job's cell, which the event stream compares blocks with. */
  private cell: { readonly challengeId: string; readonly coord: Coord } | undefined;
  /** The event stream: open (the watch rests) or not; aborted at close. */
  private streamOpen = false;
  private stream: AbortController | undefined;

  constructor(options: ClientWorkSourceOptions) {
    super();
    this.options = options;
    const { client } = options;
    client.on('failover', (e) => this.emit('stale', `${e.from} failed (${e.reason}); switched to ${e.to}`));
    client.on('recovered', (e) => {
      if (e.active === e.endpoint) this.emit('stale', `${e.endpoint} is back; switched to it`);
    });
  }

  /** SOLO, or POOL with --pool (a job continues after each share). */
  get strategy(): MiningStrategy {
    return this.options.pool ? POOL : SOLO;
  }

  /** The pool counters and earnings (undefined when not pooled). */
  pool(): PoolView | undefined {
    return this.options.pool ? { ...this.poolView } : undefined;
  }

  /** The validator requests go to now. */
  get url(): string {
    return this.options.client.endpoints().find((e) => e.active)?.url ?? this.options.urls[0] ?? '';
  }

  async getWork(): Promise<MiningJob> {
    const { client, signer, deviceType } = this.options;
    let work: Work;
    try {
      work = await client.getWork(deviceType === undefined ? {} : { deviceType });
    } catch (error) {
      const endpoint = error instanceof ValidatorError ? error.endpoint : undefined;
      if (
        error instanceof ValidatorError &&
        error.code === 'miner_not_registered' &&
        this.autoRegister !== undefined &&
        endpoint !== undefined &&
        !this.autoRegistered.has(endpoint)
      ) {
        this.autoRegistered.add(endpoint);
        try {
          await client.miners.register({ device_type: this.autoRegister }, { endpoint });
        } catch (registerError) {
          throw await this.explain(registerError);
        }
        this.emit('stale', `the key was not registered on ${endpoint}; registered it there`);
        return this.getWork();
      }
      throw await this.explain(error);
    }
    this.lastVersion = work.version;
    this.lastEndpoint = work.endpoint;
    const job =
      work.version === '4.1'
        ? hexchainJob(work.challenge, signer.publicKey)
        : tensorJob(work.challenge as unknown as ChallengeWire, signer.publicKey);
    this.works.set(job.challengeId, work);
    if (this.works.size > RECENT_WORK) this.works.delete(this.works.keys().next().value!);
    this.stopWatch();
    if (work.version === '4.1') {
      this.cell = { challengeId: work.challenge.id, coord: work.challenge.coord };
      this.followEvents();
      this.watchCell(work.challenge.id, work.challenge.coord);
      if (this.options.pool) {
        if (work.challenge.share_difficulty === undefined) {
          throw new Error(
            `the challenge from ${work.endpoint} carries no share target: is this key a pool member, and does the validator run a pool (GET /pool type)?`,
          );
        }
        this.poolView.shareDifficulty = work.challenge.share_difficulty;
        this.startPoolWatch();
      }
    }
    return job;
  }

  /**
   * Polls the job's target cell; when a block by another key occupies it, emits `stale` (the
   * lattice moved) so the Miner asks for new work. Our own block is not news: the Miner
   * already fetches new work after an acceptance.
   */
  private watchCell(challengeId: string, coord: { q: number; r: number; s: number }): void {
    const every = this.options.latticeWatchMs ?? 2000;
    if (every <= 0) return;
    let checking = false;
    const timer = setInterval(() => {
      if (checking || this.streamOpen) return;
      checking = true;
      this.options.client.hexchain
        .block(coord)
        .then((block) => {
          if (this.watch !== timer) return;
          this.stopWatch();
          if (block.miner_pubkey !== this.options.signer.publicKeyHex) {
            this.emit(
              'stale',
              `the lattice moved: cell q=${coord.q} r=${coord.r} s=${coord.s} of ${challengeId} was taken by block ${block.block_hash.slice(0, 16)}`,
            );
          }
        })
        .catch(() => {
          // block_not_found: the cell is still free. Other failures: the client's failover
          // and the Miner's own retries handle the validator; the watch just tries again.
        })
        .finally(() => {
          checking = false;
        });
    }, every);
    timer.unref();
    this.watch = timer;
  }

  private stopWatch(): void {
    if (this.watch !== undefined) clearInterval(this.watch);
    this.watch = undefined;
    this.cell = undefined;
  }

  /** Starts following the event stream once (it reconnects and fails over by itself). */
  private followEvents(): void {
    if (this.stream !== undefined || this.options.latticeEvents === false) return;
    const controller = new AbortController();
    this.stream = controller;
    const events = this.options.client.hexchain.events({
      signal: controller.signal,
      onOpen: () => {
        this.streamOpen = true;
      },
      onReconnect: () => {
        this.streamOpen = false;
      },
    });
    void (async () => {
      try {
        for await (const e of events) {
          if (e.event !== 'block' || this.cell === undefined) continue;
          const { coord, challengeId } = this.cell;
          const block = e.data.block;
          if (!coordEquals(block.coord, coord)) continue;
          this.stopWatch();
          if (block.miner_pubkey !== this.options.signer.publicKeyHex) {
            this.emit(
              'stale',
              `the lattice moved: cell q=${coord.q} r=${coord.r} s=${coord.s} of ${challengeId} was taken by block ${block.block_hash.slice(0, 16)}`,
            );
          }
        }
      } catch {
        // A validator without the stream (404) or another refusal: the cell watch polls.
      } finally {
        this.streamOpen = false;
      }
    })();
  }

  /** Stops the lattice watch, the event stream and the pool polling (call at shutdown). */
  close(): void {
    this.stopWatch();
    this.stream?.abort();
    if (this.poolTimer !== undefined) clearInterval(this.poolTimer);
    this.poolTimer = undefined;
  }

  /** Polls GET /pool and GET /pool/members/:pubkey: last block and payouts as events. */
  private startPoolWatch(): void {
    if (this.poolTimer !== undefined) return;
    const poll = () => {
      this.pollPool().catch(() => {
        // The next poll tries again; the Miner reports the connection itself.
      });
    };
    this.poolTimer = setInterval(poll, this.options.poolPollMs ?? 10_000);
    this.poolTimer.unref();
    poll();
  }

  /** One poll of the pool and of this member (exposed for tests). */
  async pollPool(): Promise<void> {
    const { client, signer } = this.options;
    const [info, member] = await Promise.all([client.pool.info(), client.pool.member(signer.publicKeyHex)]);
    const last = info.last_block;
    if (last !== null) {
      const mine = last.finder === signer.publicKeyHex;
      this.poolView.lastBlock = { height: last.height, mine, foundAt: last.found_at };
      if (this.lastPoolHeight !== undefined && last.height !== this.lastPoolHeight) {
        this.emit('pool', {
          type: 'pool-block',
          height: last.height,
          blockHash: last.block_hash,
          finder: last.finder,
          mine,
          reward: last.reward,
          fee: last.fee,
        });
      }
      this.lastPoolHeight = last.height;
    } else {
      this.lastPoolHeight = 0;
    }
    this.poolView.estimated = member.estimated_payout;
    this.poolView.paid = member.paid_total;
    const paidMinor = parseAmount(member.paid_total, 'PTM');
    if (this.lastPaidMinor !== undefined && paidMinor > this.lastPaidMinor) {
      this.emit('pool', {
        type: 'payout',
        amount: formatAmount(paidMinor - this.lastPaidMinor, 'PTM'),
        paidTotal: member.paid_total,
      });
    }
    this.lastPaidMinor = paidMinor;
  }

  /** Sends a share (at most SHARES_IN_FLIGHT at once); a block, a stale share or vardiff means new work. */
  private async submitShare(body: HexSubmissionInput): Promise<SubmitOutcome> {
    // A share target that is too easy for this miner (a new member, before vardiff has moved)
    // can find thousands of shares a second: send a few at a time, so that the validator's
    // answers (and with them the new share difficulty) come back at once.
    while (this.sharesInFlight >= SHARES_IN_FLIGHT) {
      await new Promise<void>((resolve) => this.shareWaiters.push(resolve));
    }
    this.sharesInFlight++;
    try {
      return await this.sendShare(body);
    } finally {
      this.sharesInFlight--;
      this.shareWaiters.shift()?.();
    }
  }

  private async sendShare(body: HexSubmissionInput): Promise<SubmitOutcome> {
    try {
      const result: PoolShareResult = await this.options.client.pool.share(body);
      this.poolView.sharesAccepted++;
      if (result.kind === 'block') {
        this.poolView.blocks++;
        this.stopWatch();
        this.emit('stale', `share ${result.pow_hash.slice(0, 16)} was a block for the pool: new work`);
      } else if (result.next_share_difficulty !== this.poolView.shareDifficulty) {
        // Vardiff moved this member's share difficulty: it applies to new challenges only, so
        // take one now rather than keep sending shares at the old pace.
        this.emit(
          'stale',
          `vardiff: share difficulty ${this.poolView.shareDifficulty ?? 'n/a'} -> ${result.next_share_difficulty}: new work`,
        );
        this.poolView.shareDifficulty = result.next_share_difficulty;
      }
      return { status: 'accepted', details: result as unknown as Record<string, unknown> };
    } catch (error) {
      if (error instanceof ValidatorError && error.status !== undefined && error.status < 500) {
        if (error.code === 'share_stale') {
          this.poolView.sharesStale++;
          this.emit('stale', 'share was stale (challenge expired or cell taken): new work');
        } else this.poolView.sharesRejected++;
        return { status: 'rejected', code: error.code, message: error.serverMessage ?? error.shortMessage };
      }
      return { status: 'unavailable', reason: failureReason(error) };
    }
  }

  async submit(found: FoundResult): Promise<SubmitOutcome> {
    const { client, signer } = this.options;
    const minerKey =
      found.kind === 'hexchain' ? found.submission.block.miner_pubkey : found.proof.miner_pubkey;
    if (minerKey !== signer.publicKeyHex) {
      return {
        status: 'rejected',
        code: 'pubkey_mismatch',
        message: `result ${found.id} was found for key ${minerKey}, not for this key ${signer.publicKeyHex}`,
      };
    }
    // Built and verified by the miner; signed here, once, and sent as it is.
    let signed: ReturnType<typeof signFound>;
    try {
      signed = signFound(found, signer);
    } catch (error) {
      // Only a damaged journal line gets here (a header that is not this result's): final.
      return { status: 'rejected', code: 'validation_failed', message: describeError(error) };
    }
    const work = this.works.get(found.challengeId);
    if (this.options.pool && found.kind === 'hexchain')
      return this.submitShare(signed as SignedHexSubmission);
    if (work !== undefined) {
      try {
        const { result } = await client.submitSigned(work, signed);
        if (work.version === '4.1' && this.works.get(found.challengeId) === work) this.stopWatch();
        return { status: 'accepted', details: result as unknown as Record<string, unknown> };
      } catch (error) {
        return outcomeOf(error, work.endpoint);
      }
    }
    // A journaled result from an earlier run: its work is gone, the result holds what is
    // signed, and which validator issued it is not known. Offered to each validator in order:
    // one that does not know the challenge says challenge_not_found, and the next is tried.
    const send = (endpoint: string): Promise<unknown> =>
      'proof' in signed
        ? client.v40.submit(signed, { endpoint })
        : client.hexchain.submit(signed, { endpoint });
    let unavailable: SubmitOutcome | undefined;
    let notFound: SubmitOutcome | undefined;
    for (const endpoint of this.options.urls) {
      try {
        const result = await send(endpoint);
        return { status: 'accepted', details: result as unknown as Record<string, unknown> };
      } catch (error) {
        const outcome = outcomeOf(error, endpoint);
        if (outcome.status === 'rejected' && outcome.code === 'challenge_not_found') notFound ??= outcome;
        else if (outcome.status === 'unavailable') unavailable ??= outcome;
        else return outcome;
      }
    }
    return unavailable ?? notFound ?? { status: 'unavailable', reason: 'no validator configured' };
  }

  /** The validator that issued a result's work (undefined for a result of an earlier run). */
  endpointOf(found: FoundResult): string | undefined {
    return this.works.get(found.challengeId)?.endpoint;
  }

  /** An error whose message says why no work came: which validators were tried and why. */
  async explain(error: unknown): Promise<Error> {
    const { signer, registerCommand } = this.options;
    if (error instanceof ValidatorError && error.code === 'miner_not_registered') {
      const url = error.endpoint ?? this.url ?? '';
      return new Error(
        `key ${signer.publicKeyHex} is not registered on ${url}${registerCommand ? `: run ${registerCommand(this.options.urls)}` : ''}`,
        { cause: error },
      );
    }
    if (isUnreachable(error)) {
      const tried = await this.probe();
      return new Error(
        `no validator reachable: tried ${tried.map((t) => `${t.url} (${t.reason})`).join(', ')}`,
        { cause: error },
      );
    }
    return new Error(describeError(error), { cause: error });
  }

  /** Probes every validator once (GET /health, no retries) and says how each failed. */
  async probe(): Promise<{ url: string; ok: boolean; reason: string }[]> {
    const { client, urls, probeTimeoutMs = 3000 } = this.options;
    return Promise.all(
      urls.map(async (url) => {
        try {
          await client.node.health({ endpoint: url, retries: 0, timeoutMs: probeTimeoutMs });
          return { url, ok: true, reason: 'answers /health but gave no work' };
        } catch (error) {
          return { url, ok: false, reason: failureReason(error) };
        }
      }),
    );
  }
}
