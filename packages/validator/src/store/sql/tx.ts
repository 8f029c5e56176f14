import type {
  BlockRepo,
  ChallengeRepo,
  CounterRepo,
  DeviceRepo,
  EconomyRepos,
  HexChallengeRepo,
  LedgerRepo,
  MetaRepo,
  MinerRepo,
  NodeRepo,
  PoolRepo,
  ProofRepo,
  RequestNonceRepo,
  StorageTx,
} from '../types.js';
import { SqlBlockRepo } from './blocks.js';
import { SqlChallengeRepo } from './challenges.js';
import { SqlCounterRepo } from './counters.js';
import { SqlDeviceRepo } from './devices.js';
import { sqlEconomyRepos } from './economy.js';
import { SqlHexChallengeRepo } from './hex-challenges.js';
import { SqlLedgerRepo } from './ledger.js';
import { SqlMetaRepo } from './meta.js';
import { SqlMinerRepo } from './miners.js';
import { SqlNodeRepo } from './nodes.js';
import { SqlPoolRepo } from './pool.js';
import { SqlProofRepo } from './proofs.js';
import { SqlRequestNonceRepo } from './request-nonces.js';
import { checkNotification, type Scope } from './scope.js';

/**
 * The repositories of one transaction (or read), each bound to its {@link Scope}: every call
 * refuses to work once that transaction has ended. One file per aggregate beside this one.
 */
export class SqlTx implements StorageTx {
  readonly meta: MetaRepo;
  readonly counters: CounterRepo;
  readonly ledger: LedgerRepo;
  readonly devices: DeviceRepo;
  readonly challenges: ChallengeRepo;
  readonly proofs: ProofRepo;
  readonly miners: MinerRepo;
  readonly hexChallenges: HexChallengeRepo;
  readonly blocks: BlockRepo;
  readonly economy: EconomyRepos;
  readonly pool: PoolRepo;
  readonly requestNonces: RequestNonceRepo;
  readonly nodes: NodeRepo;

  constructor(scope: Scope) {
    this.meta = new SqlMetaRepo(scope);
    this.counters = new SqlCounterRepo(scope);
    this.ledger = new SqlLedgerRepo(scope);
    this.devices = new SqlDeviceRepo(scope);
    this.challenges = new SqlChallengeRepo(scope);
    this.proofs = new SqlProofRepo(scope);
    this.miners = new SqlMinerRepo(scope);
    this.hexChallenges = new SqlHexChallengeRepo(scope);
    this.blocks = new SqlBlockRepo(scope);
    this.economy = sqlEconomyRepos(scope);
    this.pool = new SqlPoolRepo(scope);
    this.requestNonces = new SqlRequestNonceRepo(scope);
    this.nodes = new SqlNodeRepo(scope);
    this.#scope = scope;
    // An arrow bound to this transaction's scope: it works whatever `this` a caller (or a
    // wrapper of the tx, e.g. a Proxy) calls it with.
    this.inFlight = (write) => {
      write.catch((error: unknown) => {
        scope.failed ??= { error };
      });
      scope.write('a write left in flight');
    };
  }

  readonly inFlight: (write: Promise<unknown>) => void;

  readonly #scope: Scope;

  async notify(channel: string, payload: string): Promise<void> {
    checkNotification(channel, payload);
    this.#scope.write('notify');
    this.#scope.notifications.push({ channel, payload });
  }
}
