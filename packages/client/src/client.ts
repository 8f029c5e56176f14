import {
  type Coord,
  fromHex,
  type HexEvent,
  proofFromWork,
  type RouteBody,
  type RouteQuery,
  type RouteReply,
  type SignedHexSubmission,
  type SignedProof,
} from '@tensormine/protocol';
import { InvalidInputError, NetworkError, ProtocolMismatchError } from './errors.js';
import { type EventStreamOptions, hexEventStream } from './event-stream.js';
import {
  checkNonce,
  defaultSlot,
  type GetWorkParams,
  type HexWork,
  type HexWorkResult,
  invalidatesDetection,
  isHexchainMissing,
  ProtocolDetector,
  type ProtocolVersion,
  type SignedSolution,
  type SubmitWorkResult,
  type TensorWork,
  type TensorWorkResult,
  type Work,
  type WorkSolution,
  workOf,
} from './mining.js';
import type { CallOptions, ClientOptions } from './options.js';
import { ServiceClient, type ServiceOperationId } from './service-client.js';
import type { Signer } from './signer.js';

/**
 * The validator client: `request()` for any validator route, a named method for every one,
 * grouped by what they are about, and the mining helpers (getWork, submitWork) that pick the
 * protocol generation by themselves.
 */

export interface ValidatorClientOptions extends ClientOptions {
  /**
   * The protocol generation to mine with: '4.1' (hexchain), '4.0', or 'auto' (the default): probe
   * GET /api/hexchain/status once per validator (200: v4.1, 404: v4.0).
   */
  readonly protocol?: ProtocolVersion | 'auto';
}

/** The validator's operationIds. */
export type ValidatorOperationId = ServiceOperationId<'validator'>;

/** Which method calls which operation: the one table the groups are built from (docs/sdk.md). */
export const CLIENT_METHODS = {
  node: { health: 'getHealth', status: 'getStatus', peers: 'getPeers' },
  v40: { challenge: 'requestChallenge', submit: 'submitProof' },
  hexchain: {
    challenge: 'hexChallenge',
    submit: 'hexSubmit',
    status: 'hexStatus',
    lattice: 'hexLattice',
    block: 'hexBlock',
    events: 'hexEvents',
  },
  miners: { get: 'getMiner', register: 'registerDevice', devices: 'listDevices' },
  pool: {
    info: 'getPool',
    status: 'getPoolStatus',
    join: 'poolJoin',
    leave: 'poolLeave',
    share: 'poolShare',
    member: 'getPoolMember',
  },
  economy: {
    stake: 'stake',
    unstake: 'unstake',
    claim: 'claimYield',
    stakes: 'getStakes',
    swapQuote: 'swapQuote',
    swapExecute: 'swapExecute',
    swapPools: 'getSwapPools',
    vaultDeposit: 'vaultDeposit',
    vaultWithdraw: 'vaultWithdraw',
    vaults: 'getVaults',
    orders: 'listOrders',
    placeOrder: 'placeOrder',
    cancelOrder: 'cancelOrder',
    ledger: 'getLedgerEntries',
    transfer: 'transfer',
    getTransfer: 'getTransfer',
    balances: 'getBalances',
  },
  admin: { metrics: 'getAdminMetrics', config: 'getAdminConfig', setConfig: 'setAdminConfig' },
} as const satisfies Record<string, Record<string, ValidatorOperationId>>;

type Reply<Id extends ValidatorOperationId> = Promise<RouteReply<Id>>;

/** The body of an operation that acts for the signer: `pubkey` may be left out (the signer's). */
export type ActingBody<Id extends ValidatorOperationId> = Omit<RouteBody<Id>, 'pubkey'> & {
  readonly pubkey?: string;
};

/** GET /health, GET /status, GET /network/peers. */
export interface NodeMethods {
  /** Liveness, the protocol versions served and the key that signs receipts. */
  health(options?: CallOptions): Reply<'getHealth'>;
  /** Node configuration and counters (v4.0, deprecated: use health and hexchain.status). */
  status(options?: CallOptions): Reply<'getStatus'>;
  /** Peer validators (empty in local_only mode). */
  peers(options?: CallOptions): Reply<'getPeers'>;
}

/** The v4.0 exchange: POST /challenge, POST /submit (deprecated by v4.1, still served). */
export interface V40Methods {
  challenge(body: RouteBody<'requestChallenge'>, options?: CallOptions): Reply<'requestChallenge'>;
  /** Sends a proof envelope as it is; `client.submitWork` builds and signs one for you. */
  submit(body: RouteBody<'submitProof'>, options?: CallOptions): Reply<'submitProof'>;
}

/** The v4.1 hexchain under /api/hexchain/. */
export interface HexchainMethods {
  challenge(body: RouteBody<'hexChallenge'>, options?: CallOptions): Reply<'hexChallenge'>;
  /** Sends a block submission as it is; `client.submitWork` builds and signs one for you. */
  submit(body: RouteBody<'hexSubmit'>, options?: CallOptions): Reply<'hexSubmit'>;
  status(options?: CallOptions): Reply<'hexStatus'>;
  /** One page of the mined blocks (`limit`, `cursor`). */
  lattice(query?: RouteQuery<'hexLattice'>, options?: CallOptions): Reply<'hexLattice'>;
  /** The block at a coordinate (checked locally: q + r + s = 0). */
  block(coord: Coord, options?: CallOptions): Reply<'hexBlock'>;
  /**
   * The push channel (GET /api/hexchain/events): accepted blocks, retargets and difficulty
   * changes as they happen, reconnected and resumed (Last-Event-ID) across breaks and failover.
   *
   * ```ts
   * for await (const e of client.hexchain.events({ signal })) if (e.event === 'block') ...
   * ```
   */
  events(options?: EventStreamOptions): AsyncGenerator<HexEvent, void, undefined>;
}

/** Miner accounts and devices. */
export interface MinerMethods {
  /** A miner account; default the signer's key. */
  get(pubkey?: string, options?: CallOptions): Reply<'getMiner'>;
  /** Registers the signer's key (signed): `device_type` default native, `port` for v4.1 callbacks. */
  register(body?: Partial<ActingBody<'registerDevice'>>, options?: CallOptions): Reply<'registerDevice'>;
  /** The registered devices (the fleet). */
  devices(query?: RouteQuery<'listDevices'>, options?: CallOptions): Reply<'listDevices'>;
}

/** The mining pool. */
export interface PoolMethods {
  info(options?: CallOptions): Reply<'getPool'>;
  status(options?: CallOptions): Reply<'getPoolStatus'>;
  /** Joins with a stake (signed). */
  join(body: ActingBody<'poolJoin'>, options?: CallOptions): Reply<'poolJoin'>;
  /** Leaves; the stake is returned (signed). */
  leave(body?: ActingBody<'poolLeave'>, options?: CallOptions): Reply<'poolLeave'>;
  /** Submits a share (a signed v4.1 submission meeting the member's share target). */
  share(body: RouteBody<'poolShare'>, options?: CallOptions): Reply<'poolShare'>;
  /** A member's stake, share difficulty, share counts and earnings (default: the signer's key). */
  member(pubkey?: string, options?: CallOptions): Reply<'getPoolMember'>;
}

/** Staking, swaps, vaults, the marketplace and the ledger. The POSTs are signed by the signer. */
export interface EconomyMethods {
  stake(body: ActingBody<'stake'>, options?: CallOptions): Reply<'stake'>;
  unstake(body: ActingBody<'unstake'>, options?: CallOptions): Reply<'unstake'>;
  claim(body: ActingBody<'claimYield'>, options?: CallOptions): Reply<'claimYield'>;
  /** Open stake positions; default the signer's key. */
  stakes(pubkey?: string, options?: CallOptions): Reply<'getStakes'>;
  swapQuote(body: RouteBody<'swapQuote'>, options?: CallOptions): Reply<'swapQuote'>;
  swapExecute(body: ActingBody<'swapExecute'>, options?: CallOptions): Reply<'swapExecute'>;
  swapPools(options?: CallOptions): Reply<'getSwapPools'>;
  vaultDeposit(body: ActingBody<'vaultDeposit'>, options?: CallOptions): Reply<'vaultDeposit'>;
  vaultWithdraw(body: ActingBody<'vaultWithdraw'>, options?: CallOptions): Reply<'vaultWithdraw'>;
  /** Vaults; default the signer's key. */
  vaults(pubkey?: string, options?: CallOptions): Reply<'getVaults'>;
  orders(query?: RouteQuery<'listOrders'>, options?: CallOptions): Reply<'listOrders'>;
  placeOrder(body: ActingBody<'placeOrder'>, options?: CallOptions): Reply<'placeOrder'>;
  /** Cancels a resting order of the signer; the unfilled escrow is returned (signed). */
  cancelOrder(body: ActingBody<'cancelOrder'>, options?: CallOptions): Reply<'cancelOrder'>;
  /** Ledger entries, newest first (filters: pubkey, token, type; pages). */
  ledger(query?: RouteQuery<'getLedgerEntries'>, options?: CallOptions): Reply<'getLedgerEntries'>;
  /**
   * Sends tokens from the signer to `to` (signed; `from` defaults to the signer). Resending the
   * same signed request (same headers and body) returns the same transfer and moves nothing again.
   */
  transfer(body: TransferBody, options?: CallOptions): Reply<'transfer'>;
  /** A transfer by id. */
  getTransfer(transferId: string, options?: CallOptions): Reply<'getTransfer'>;
  /** Balances per token (available, staked, in vaults, in orders); default the signer's key. */
  balances(pubkey?: string, options?: CallOptions): Reply<'getBalances'>;
}

/** The body of a transfer: `from` may be left out (the signer's key). */
export type TransferBody = Omit<RouteBody<'transfer'>, 'from'> & { readonly from?: string };

/** /admin/*: needs the admin token (client option `adminToken`). */
export interface AdminMethods {
  metrics(options?: CallOptions): Reply<'getAdminMetrics'>;
  config(options?: CallOptions): Reply<'getAdminConfig'>;
  setConfig(body: RouteBody<'setAdminConfig'>, options?: CallOptions): Reply<'setAdminConfig'>;
}

export class TensormineClient extends ServiceClient<'validator'> {
  readonly node: NodeMethods;
  readonly v40: V40Methods;
  readonly hexchain: HexchainMethods;
  readonly miners: MinerMethods;
  readonly pool: PoolMethods;
  readonly economy: EconomyMethods;
  readonly admin: AdminMethods;
  readonly #detector: ProtocolDetector;

  constructor(options: ValidatorClientOptions) {
    super('validator', options);
    const protocol = options.protocol ?? 'auto';
    if (protocol !== 'auto' && protocol !== '4.0' && protocol !== '4.1') {
      throw new InvalidInputError([
        {
          path: 'protocol',
          message: `protocol: expected "4.0", "4.1" or "auto", got ${JSON.stringify(protocol)}`,
        },
      ]);
    }
    this.#detector = new ProtocolDetector(this.transport, protocol === 'auto' ? undefined : protocol);

    const call = <Id extends ValidatorOperationId>(id: Id, input: object, options?: CallOptions): Reply<Id> =>
      this.transport.send(id, input, options).then((sent) => sent.data);
    const acting = (body: object | undefined, options: CallOptions | undefined): object => {
      const pubkey = (options?.signer ?? this.transport.signer)?.publicKeyHex;
      return { ...(pubkey === undefined ? {} : { pubkey }), ...body };
    };
    const key = (pubkey: string | undefined, options: CallOptions | undefined, what: string): object => {
      const value = pubkey ?? (options?.signer ?? this.transport.signer)?.publicKeyHex;
      if (value === undefined) {
        throw new InvalidInputError([
          { path: 'pubkey', message: `pubkey: ${what} needs a public key or a signer, got neither` },
        ]);
      }
      return { params: { pubkey: value } };
    };
    const m = CLIENT_METHODS;

    this.node = {
      health: (o) => call(m.node.health, {}, o),
      status: (o) => call(m.node.status, {}, o),
      peers: (o) => call(m.node.peers, {}, o),
    };
    this.v40 = {
      challenge: (body, o) => call(m.v40.challenge, { body }, o),
      submit: (body, o) => call(m.v40.submit, { body }, o),
    };
    this.hexchain = {
      challenge: (body, o) => call(m.hexchain.challenge, { body }, o),
      submit: (body, o) => call(m.hexchain.submit, { body }, o),
      status: (o) => call(m.hexchain.status, {}, o),
      lattice: (query, o) => call(m.hexchain.lattice, query === undefined ? {} : { query }, o),
      block: (coord, o) =>
        call(
          m.hexchain.block,
          {
            params:
              typeof coord === 'object' && coord !== null ? { q: coord.q, r: coord.r, s: coord.s } : coord,
          },
          o,
        ),
      events: (o) => hexEventStream(this.transport, o),
    };
    this.miners = {
      get: (pubkey, o) => call(m.miners.get, key(pubkey, o, 'miners.get'), o),
      register: (body, o) =>
        call(m.miners.register, { body: acting({ device_type: 'native', ...body }, o) }, o),
      devices: (query, o) => call(m.miners.devices, query === undefined ? {} : { query }, o),
    };
    this.pool = {
      info: (o) => call(m.pool.info, {}, o),
      status: (o) => call(m.pool.status, {}, o),
      join: (body, o) => call(m.pool.join, { body: acting(body, o) }, o),
      leave: (body, o) => call(m.pool.leave, { body: acting(body, o) }, o),
      share: (body, o) => call(m.pool.share, { body }, o),
      member: (pubkey, o) => call(m.pool.member, key(pubkey, o, 'pool.member'), o),
    };
    this.economy = {
      stake: (body, o) => call(m.economy.stake, { body: acting(body, o) }, o),
      unstake: (body, o) => call(m.economy.unstake, { body: acting(body, o) }, o),
      claim: (body, o) => call(m.economy.claim, { body: acting(body, o) }, o),
      stakes: (pubkey, o) => call(m.economy.stakes, key(pubkey, o, 'economy.stakes'), o),
      swapQuote: (body, o) => call(m.economy.swapQuote, { body }, o),
      swapExecute: (body, o) => call(m.economy.swapExecute, { body: acting(body, o) }, o),
      swapPools: (o) => call(m.economy.swapPools, {}, o),
      vaultDeposit: (body, o) => call(m.economy.vaultDeposit, { body: acting(body, o) }, o),
      vaultWithdraw: (body, o) => call(m.economy.vaultWithdraw, { body: acting(body, o) }, o),
      vaults: (pubkey, o) => call(m.economy.vaults, key(pubkey, o, 'economy.vaults'), o),
      orders: (query, o) => call(m.economy.orders, query === undefined ? {} : { query }, o),
      placeOrder: (body, o) => call(m.economy.placeOrder, { body: acting(body, o) }, o),
      cancelOrder: (body, o) => call(m.economy.cancelOrder, { body: acting(body, o) }, o),
      ledger: (query, o) => call(m.economy.ledger, query === undefined ? {} : { query }, o),
      transfer: (body, o) => {
        const from = body.from ?? (o?.signer ?? this.transport.signer)?.publicKeyHex;
        return call(m.economy.transfer, { body: { ...(from === undefined ? {} : { from }), ...body } }, o);
      },
      getTransfer: (transferId, o) => call(m.economy.getTransfer, { params: { transfer_id: transferId } }, o),
      balances: (pubkey, o) => call(m.economy.balances, key(pubkey, o, 'economy.balances'), o),
    };
    this.admin = {
      metrics: (o) => call(m.admin.metrics, {}, o),
      config: (o) => call(m.admin.config, {}, o),
      setConfig: (body, o) => call(m.admin.setConfig, { body }, o),
    };
  }

  /** The signer of the client, if any. */
  get signer(): Signer | undefined {
    return this.transport.signer;
  }

  /**
   * The protocol generation the validator in use speaks: the forced one, or detected once per
   * validator (GET /api/hexchain/status: 200 is v4.1, 404 is v4.0) and remembered.
   */
  detectProtocol(options: CallOptions = {}): Promise<ProtocolVersion> {
    return this.#detector.detect(options.endpoint ?? this.transport.pool.active(), options);
  }

  /**
   * Asks for a unit of work in the protocol generation of the validator in use: a v4.1 lattice
   * challenge where the hexchain is served, else a v4.0 tensor challenge. The work remembers the
   * validator that issued it; submitWork sends the solution there.
   *
   * @throws ValidatorError (e.g. miner_not_registered), ProtocolMismatchError (v4.1 forced on a
   *   validator without it), NetworkError, TimeoutError, AbortedError
   */
  async getWork(params: GetWorkParams = {}, options: CallOptions = {}): Promise<Work> {
    const fallback = defaultSlot();
    const slot = params.slot ?? fallback.slot;
    const slotHash =
      params.slotHash ?? (params.slot === undefined ? fallback.slotHash : defaultSlot(slot * 1000).slotHash);
    const signer = options.signer ?? this.transport.signer;
    const minerPubkey =
      params.minerPubkey === false ? undefined : (params.minerPubkey ?? signer?.publicKeyHex);
    const attempts = options.endpoint === undefined ? this.transport.pool.size + 1 : 2;
    let lastError: unknown;
    for (let i = 0; i < attempts; i++) {
      const endpoint = options.endpoint ?? this.transport.pool.active();
      const movedOn = () => options.endpoint === undefined && this.transport.pool.active() !== endpoint;
      let version: ProtocolVersion;
      try {
        // With other validators to turn to, a dead one is not worth retrying.
        const retries = this.transport.pool.size > 1 && options.endpoint === undefined ? 0 : options.retries;
        version = await this.#detector.detect(endpoint, {
          ...options,
          ...(retries === undefined ? {} : { retries }),
        });
      } catch (error) {
        // The probe is a GET: when it failed and the pool moved on, ask the next validator.
        lastError = error;
        if (invalidatesDetection(error) && movedOn()) continue;
        throw error;
      }
      const pinned = { ...options, endpoint };
      try {
        if (version === '4.1') {
          const challenge = await this.hexchain.challenge(
            {
              slot,
              slot_hash: slotHash,
              ...(minerPubkey === undefined ? {} : { miner_pubkey: minerPubkey }),
            },
            pinned,
          );
          return { version, challenge, endpoint };
        }
        const challenge = await this.v40.challenge(
          {
            slot,
            slot_hash: slotHash,
            ...(params.deviceType === undefined ? {} : { device_type: params.deviceType }),
            ...(minerPubkey === undefined ? {} : { miner_pubkey: minerPubkey }),
          },
          pinned,
        );
        return { version, challenge, endpoint };
      } catch (error) {
        lastError = error;
        if (!invalidatesDetection(error)) throw error;
        this.#detector.forget(endpoint);
        if (isHexchainMissing(error)) {
          if (this.#detector.forced === '4.1') {
            throw new ProtocolMismatchError(
              `protocol 4.1 was forced, but ${endpoint} does not serve the hexchain endpoints (HTTP 404 on /api/hexchain/challenge)`,
              { endpoint, operationId: 'hexChallenge' },
              { cause: error },
            );
          }
          continue; // The validator no longer serves v4.1: detect again.
        }
        // Like every POST, a challenge request moves to the next validator only when it provably
        // never left (connection refused); the pool has then made the next validator active.
        if (!(error instanceof NetworkError && !error.requestSent && movedOn())) throw error;
      }
    }
    throw lastError;
  }

  /**
   * Submits the solution of a work unit, signed by the signer, to the validator that issued it:
   * a v4.1 block (POST /api/hexchain/submit) or a v4.0 proof (POST /submit). Retried on a
   * connection error or a timeout, to the same validator (an identical resubmission returns the
   * original acceptance). For a caller that has only a nonce: the client builds the block or the
   * proof (a v4.0 proof's work is recomputed unless `solution.work` is given) and signs it. A
   * miner that built, verified and signed its result already sends it with `submitSigned`.
   *
   * @returns `{ version, result, endpoint }`: HexSubmitResult for v4.1, SubmitResult for v4.0.
   * @throws InvalidInputError (no signer, bad nonce), ValidatorError (the rejection reason, e.g.
   *   pow_above_target, coordinate_occupied, mml_above_threshold), NetworkError, TimeoutError
   */
  async submitWork<W extends Work>(
    work: W,
    solution: WorkSolution,
    options: CallOptions = {},
  ): Promise<SubmitWorkResult<W>> {
    checkNonce(solution.nonce);
    const signer = options.signer ?? this.transport.signer;
    if (signer === undefined) {
      throw new InvalidInputError([
        {
          path: 'signer',
          message:
            'signer: submitWork signs the proof or block; expected a Signer (createClient({ signer }) or { signer } in the call options), got none',
        },
      ]);
    }
    if (work.version === '4.1') {
      const c = (work as HexWork).challenge;
      const body = signer.buildHexSubmission({
        challengeId: c.id,
        challengeHash: fromHex(c.challenge_hash, 32, 'challenge_hash'),
        coord: c.coord,
        nonce: solution.nonce,
      }) as SignedHexSubmission;
      return this.#send(work, body, options);
    }
    if (work.version !== '4.0') throw versionMismatch(work);
    const tensorWork = work as TensorWork;
    const c = tensorWork.challenge;
    const computed = workOf(tensorWork, solution, signer.publicKey);
    const proof = proofFromWork(
      c.challenge_id,
      fromHex(c.hash, 32, 'hash'),
      signer.publicKey,
      solution.nonce,
      computed,
    );
    return this.#send(work, { proof, signature: signer.signProof(proof) }, options);
  }

  /**
   * Sends a solution built and signed already (a miner's verified result), exactly as it is, to
   * the validator that issued `work`, with `submitWork`'s retries: a v4.1 block submission
   * (POST /api/hexchain/submit) or a v4.0 signed proof envelope (POST /submit). Nothing is
   * rebuilt, recomputed or signed here; the body must answer `work` (its challenge id).
   *
   * @returns as `submitWork`.
   * @throws InvalidInputError (a body for another challenge), ProtocolMismatchError (a work
   *   that is neither 4.0 nor 4.1), ValidatorError (the rejection reason), NetworkError,
   *   TimeoutError
   */
  async submitSigned<W extends Work>(
    work: W,
    signed: SignedSolution<W>,
    options: CallOptions = {},
  ): Promise<SubmitWorkResult<W>> {
    const body = signed as SignedHexSubmission | SignedProof;
    if (work.version === '4.1') {
      const id = (work as HexWork).challenge.id;
      const given = isObject(body) && 'challenge_id' in body ? body.challenge_id : undefined;
      if (given !== id) throw notThisWork('challenge_id', id, given);
      return this.#send(work, body as SignedHexSubmission, options);
    }
    if (work.version !== '4.0') throw versionMismatch(work);
    const id = (work as TensorWork).challenge.challenge_id;
    const given = isObject(body) && isObject(body.proof) ? body.proof.challenge_id : undefined;
    if (given !== id) throw notThisWork('proof.challenge_id', id, given);
    return this.#send(work, body as SignedProof, options);
  }

  /** Sends a signed solution to the validator that issued its work (or `options.endpoint`). */
  async #send<W extends Work>(
    work: W,
    body: SignedHexSubmission | SignedProof,
    options: CallOptions,
  ): Promise<SubmitWorkResult<W>> {
    const endpoint = options.endpoint ?? work.endpoint;
    const pinned = { ...options, endpoint };
    if (work.version === '4.1') {
      const submission = body as SignedHexSubmission;
      const result = await this.#submitting(endpoint, () => this.hexchain.submit(submission, pinned));
      const done: HexWorkResult = { version: '4.1', result, submission, endpoint };
      return done as SubmitWorkResult<W>;
    }
    const { proof, signature } = body as SignedProof;
    const result = await this.#submitting(endpoint, () => this.v40.submit({ proof, signature }, pinned));
    const done: TensorWorkResult = { version: '4.0', result, proof, signature, endpoint };
    return done as SubmitWorkResult<W>;
  }

  async #submitting<T>(endpoint: string, send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      if (invalidatesDetection(error)) this.#detector.forget(endpoint);
      throw error;
    }
  }
}

/**
 * A client of a validator (or of several, with failover):
 *
 * ```ts
 * const client = createClient({ url: 'http://127.0.0.1:8420', signer: await Signer.load('miner.key') });
 * const work = await client.getWork();
 * ```
 */
export function createClient(options: ValidatorClientOptions): TensormineClient {
  return new TensormineClient(options);
}

function versionMismatch(work: Work): ProtocolMismatchError {
  return new ProtocolMismatchError(
    `work.version: expected "4.0" or "4.1", got ${JSON.stringify((work as { version?: unknown }).version)}`,
  );
}

/** A signed body that answers another challenge than the work it is sent for. */
function notThisWork(path: string, expected: string, got: unknown): InvalidInputError {
  return new InvalidInputError([
    {
      path,
      message: `${path}: expected ${JSON.stringify(expected)} (the challenge of the work), got ${got === undefined ? 'none' : JSON.stringify(got)}`,
    },
  ]);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
