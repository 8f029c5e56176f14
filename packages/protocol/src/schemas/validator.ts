import Type, { type Static } from 'typebox';
import { ACTIVATIONS, MAX_TENSOR_DIM, MIN_TENSOR_DIM, OPERATIONS } from '../tensor/devices.js';
import { MAX_DIFFICULTY, MIN_DIFFICULTY } from '../tensor/difficulty.js';
import {
  AmountSchema,
  CursorSchema,
  DeviceTypeInputSchema,
  DeviceTypeSchema,
  FractionSchema,
  Hex8Schema,
  Hex32Schema,
  IdSchema,
  nullable,
  PageLimitSchema,
  ProtocolVersionSchema,
  PublicKeyHexSchema,
  pageProperties,
  Q16RatioSchema,
  SafeUintSchema,
  SignatureBytesSchema,
  SignatureHexSchema,
  SlotHashSchema,
  TokenAmountSchema,
  TokenSymbolSchema,
  UnixSecondsSchema,
  UrlSchema,
  withDescription,
} from './common.js';
import { DeviceCallbackHealthSchema, DeviceWorkSchema } from './device-callbacks.js';
import { PoolBlockSchema } from './pool.js';

/**
 * Validator schemas: health, node status, the v4.0 challenge/proof exchange, miners, devices,
 * pool info and peers. Requests accept and ignore unknown properties; every known property is
 * checked strictly and every string and array is bounded.
 */

const Count = (description: string) => withDescription(SafeUintSchema, description);

export const PoolStrategySchema = Type.Enum(['solo', 'pplns', 'proportional'], {
  type: 'string',
  description:
    'How rewards are shared: solo (each accepted proof pays its miner), pplns (pay per last N shares of the pool), proportional (the round reward split by shares in the round).',
});
export type PoolStrategy = Static<typeof PoolStrategySchema>;

export const PeerNetworkModeSchema = Type.Enum(['local_only', 'static', 'cluster'], {
  type: 'string',
  description:
    'local_only: the node talks to no peers (network.peers is empty); static: the node syncs with a configured list of peer URLs; cluster: the node shares its database (PostgreSQL) with the other nodes of the network, which are its peers (docs/cluster.md).',
});
export type PeerNetworkMode = Static<typeof PeerNetworkModeSchema>;

// ---------------------------------------------------------------------------------------------
// Health
// ---------------------------------------------------------------------------------------------

/** Health of a companion service (status proxy, terminal backend, hub). */
export const ServiceHealthSchema = Type.Object(
  {
    status: Type.Enum(['ok', 'degraded'], {
      type: 'string',
      description: 'ok when the service and its dependencies answer; degraded when a dependency does not.',
    }),
    service: Type.String({ maxLength: 64, description: 'The service name, e.g. "tensormine-hub".' }),
    version: Type.String({ maxLength: 64, description: 'The software version of the service (semver).' }),
    uptime_s: Count('Seconds since the service started.'),
    callback_pubkey: Type.Optional(
      withDescription(
        PublicKeyHexSchema,
        'A service that calls devices back (the status proxy relaying for boards behind it): the ed25519 key that signs its callbacks (docs/protocol.md 4.17).',
      ),
    ),
  },
  { title: 'ServiceHealth', description: 'Liveness of a service.' },
);
export type ServiceHealth = Static<typeof ServiceHealthSchema>;

export const HealthSchema = Type.Object(
  {
    status: Type.Enum(['ok', 'degraded'], {
      type: 'string',
      description:
        'ok when the validator serves requests normally; degraded when a dependency (chain, peers) fails.',
    }),
    service: Type.String({ maxLength: 64, description: 'The service name: "tensormine-validator".' }),
    version: withDescription(
      ProtocolVersionSchema,
      'The newest protocol version this validator serves ("4.1" when the hexchain endpoints are enabled, else "4.0"). The seed\'s versioning section: the health response carries the version.',
    ),
    protocols: Type.Array(ProtocolVersionSchema, {
      maxItems: 16,
      description:
        'Every protocol version served, oldest first, e.g. ["4.0", "4.1"]. Clients detect the /api/hexchain/ endpoints by "4.1" being listed.',
    }),
    software_version: Type.String({ maxLength: 64, description: 'The validator software version (semver).' }),
    node_id: Type.String({
      maxLength: 128,
      description: "This node's identifier (the same as in GET /status).",
    }),
    node_pubkey: withDescription(
      PublicKeyHexSchema,
      'The ed25519 public key of the node: it signs the receipts (tx_sig) of accepted proofs (docs/protocol.md, receipts).',
    ),
    uptime_s: Count('Seconds since the validator started.'),
  },
  { title: 'Health', description: 'Validator liveness and the protocol versions it serves.' },
);
export type Health = Static<typeof HealthSchema>;

// ---------------------------------------------------------------------------------------------
// Peers
// ---------------------------------------------------------------------------------------------

export const PeerSchema = Type.Object(
  {
    node_id: Type.String({ maxLength: 128, description: "The peer's node identifier." }),
    url: withDescription(UrlSchema, 'The base URL the peer is reached at.'),
    last_seen: nullable(UnixSecondsSchema, 'When the peer last answered; null if it never did.'),
    latency_ms: nullable(
      Type.Number({ minimum: 0, description: 'Milliseconds.' }),
      'Round-trip time of the last successful exchange, in milliseconds; null if none (cluster peers exchange through the database, not with each other).',
    ),
    applied_height: Type.Optional(
      Count('cluster mode: the height up to which the peer had applied every block at its last heartbeat.'),
    ),
    synced: Type.Optional(
      Type.Boolean({
        description:
          'cluster mode: whether the peer had applied every committed block at its last heartbeat.',
      }),
    ),
    software_version: Type.Optional(
      Type.String({
        maxLength: 64,
        description: 'cluster mode: the validator software version of the peer.',
      }),
    ),
    started_at: Type.Optional(
      withDescription(UnixSecondsSchema, 'cluster mode: when the peer process started.'),
    ),
  },
  { title: 'Peer', description: 'A peer validator node.' },
);
export type Peer = Static<typeof PeerSchema>;

export const PeersResponseSchema = Type.Object(
  {
    peers: Type.Array(PeerSchema, { maxItems: 1000, description: 'Known peers; empty in local_only mode.' }),
    total_nodes: Count(
      'Number of nodes in the network including this one (1 in local_only mode; in cluster mode the live nodes sharing the database).',
    ),
    synced: Type.Boolean({
      description:
        "True when this node's state matches its peers (always true in local_only mode; in cluster mode: this node's in-memory lattice has applied every block committed to the shared database).",
    }),
    mode: PeerNetworkModeSchema,
    node_id: Type.Optional(
      Type.String({ maxLength: 128, description: 'The node that answered (as in GET /status).' }),
    ),
  },
  { title: 'PeersResponse', description: 'GET /network/peers.' },
);
export type PeersResponse = Static<typeof PeersResponseSchema>;

// ---------------------------------------------------------------------------------------------
// Node status (GET /status)
// ---------------------------------------------------------------------------------------------

export const NodeStatusSchema = Type.Object(
  {
    node_id: Type.String({ maxLength: 128, description: "This node's identifier." }),
    version: withDescription(
      ProtocolVersionSchema,
      'The newest protocol version served (as in GET /health).',
    ),
    uptime_s: Count('Seconds since the validator started.'),
    difficulty: Type.Integer({
      minimum: MIN_DIFFICULTY,
      maximum: MAX_DIFFICULTY,
      description: 'The current v4.0 difficulty (1..24) that new challenges get; see /admin/config.',
    }),
    max_tensor_dim: Type.Integer({
      minimum: MIN_TENSOR_DIM,
      maximum: MAX_TENSOR_DIM,
      description: 'The largest tensor dimension a native challenge uses (devices get smaller ones).',
    }),
    peer_network_mode: PeerNetworkModeSchema,
    pool_strategy: PoolStrategySchema,
    stats: Type.Object(
      {
        total_challenges_issued: Count(
          'v4.0 challenges issued over the lifetime of the node (kept across restarts).',
        ),
        total_proofs_valid: Count(
          'v4.0 proofs accepted over the lifetime of the node (kept across restarts).',
        ),
        total_proofs_rejected: Count(
          'v4.0 proofs rejected over the lifetime of the node (any error code; kept across restarts).',
        ),
        total_blocks_accepted: Count(
          "v4.1 hexchain blocks accepted: the chain's height, which counts every accepted block (kept across restarts; in a cluster, the blocks of every node on the database).",
        ),
      },
      {
        description: 'Counters over the lifetime of the node: they are kept in its database across restarts.',
      },
    ),
    engine: Type.Object(
      {
        tasks_processed: Count('Verification tasks run (proofs and blocks).'),
        successful: Count('Verification tasks that accepted the work.'),
        failed: Count('Verification tasks that rejected the work.'),
      },
      { description: 'The verification engine: every submitted proof or block is one task.' },
    ),
    network: Type.Object(
      {
        peers: Type.Array(PeerSchema, {
          maxItems: 1000,
          description: 'Known peers; empty in local_only mode.',
        }),
        total_nodes: Count('Number of nodes in the network including this one.'),
        synced: Type.Boolean({
          description:
            'True when this node is in sync with its peers (cluster mode: its lattice has applied every committed block).',
        }),
      },
      { description: 'Peer network state.' },
    ),
    hexchain: Type.Object(
      {
        enabled: Type.Boolean({ description: 'True when the v4.1 /api/hexchain/ endpoints are served.' }),
        difficulty: Count('The hexchain difficulty: expected hashes per block (0 when disabled).'),
        occupied: Count('Lattice coordinates occupied by a block.'),
      },
      { description: 'v4.1 lattice summary (details: GET /api/hexchain/status).' },
    ),
  },
  { title: 'NodeStatus', description: 'GET /status: node configuration and counters.' },
);
export type NodeStatus = Static<typeof NodeStatusSchema>;

// ---------------------------------------------------------------------------------------------
// v4.0 challenge
// ---------------------------------------------------------------------------------------------

export const ChallengeRequestSchema = Type.Object(
  {
    slot: withDescription(
      SafeUintSchema,
      'The chain slot height the miner works on; difficulty scales with it.',
    ),
    slot_hash: withDescription(SlotHashSchema, 'The hash of that slot, mixed into the challenge seed.'),
    device_type: Type.Optional(
      withDescription(
        DeviceTypeInputSchema,
        'The device that will compute the challenge; sizes the tensors. Default native; cpu is an alias of native.',
        {
          default: 'native',
        },
      ),
    ),
    miner_pubkey: Type.Optional(
      withDescription(
        PublicKeyHexSchema,
        'The miner that will solve it. Optional; when given, the key must be registered (miner_not_registered) and a registered device type takes precedence over device_type.',
      ),
    ),
  },
  { title: 'ChallengeRequest', description: 'POST /challenge body.' },
);
export type ChallengeRequest = Static<typeof ChallengeRequestSchema>;

export const OperationTypeSchema = Type.Enum(OPERATIONS, {
  type: 'string',
  description: 'The tensor operation: matmul (matrix product) or conv (2-D convolution).',
});

export const ActivationSchema = Type.Enum(ACTIVATIONS, {
  type: 'string',
  description:
    'The activation applied to the operation result (integer approximations, see the consensus spec).',
});

const TensorShape = (description: string) =>
  Type.Array(Type.Integer({ minimum: 1, maximum: 65536 }), { minItems: 1, maxItems: 4, description });

export const InputTensorSchema = Type.Object(
  {
    shape: TensorShape('Dimensions, outermost first (1 to 4 of them).'),
    dtype: Type.Literal('int8', { description: 'Element type: signed 8-bit integers.' }),
    data: Type.Array(Type.Integer({ minimum: -128, maximum: 127 }), {
      maxItems: 65536,
      description: 'Elements in row-major order; the length is the product of shape.',
    }),
  },
  { title: 'InputTensor', description: 'The tensor to operate on.' },
);
export type InputTensor = Static<typeof InputTensorSchema>;

export const ChallengeSchema = Type.Object(
  {
    challenge_id: withDescription(IdSchema, 'Unique challenge identifier; the proof echoes it.'),
    id: withDescription(IdSchema, 'The same value as challenge_id (older clients read it as id).'),
    hash: withDescription(Hex32Schema, 'The challenge hash, which the proof echoes as challenge_hash.'),
    version: Type.Literal('4.0', { description: 'Protocol version of this challenge.' }),
    slot: withDescription(SafeUintSchema, 'The slot from the request.'),
    slot_hash: withDescription(SlotHashSchema, 'The slot hash from the request.'),
    device_type: withDescription(DeviceTypeSchema, 'The device the challenge is sized for.'),
    operation_type: OperationTypeSchema,
    activation: ActivationSchema,
    input_tensor: InputTensorSchema,
    weight_shape: TensorShape(
      'Shape of the weight tensor (matmul: [N, N]; conv: [filters, 3, 3]). The weights are not sent: each nonce derives them from challenge hash, miner key and nonce.',
    ),
    difficulty: Type.Integer({
      minimum: MIN_DIFFICULTY,
      maximum: MAX_DIFFICULTY,
      description: 'The network difficulty (1..24) for this slot.',
    }),
    mml_threshold: withDescription(
      Q16RatioSchema,
      "Maximum compression ratio allowed: a proof's mml_score must be at or below it. An exact multiple of 1/65536.",
    ),
    mml_threshold_q16: Type.Integer({
      minimum: 0,
      maximum: 65536,
      description: 'mml_threshold times 65536, as an integer (the value consensus code compares with).',
    }),
    path_distance_max: Type.Integer({
      minimum: 0,
      maximum: 64,
      description: "Maximum Hamming distance (bits) between the proof's path_signature and path_target.",
    }),
    path_target: withDescription(
      Hex8Schema,
      'The 64-bit neural-path target the path_signature is compared with.',
    ),
    target_nonce: withDescription(
      SafeUintSchema,
      "The expected number of nonce iterations needed at this difficulty, rounded up (the seed's name; equal to expected_iterations). A hint, not a bound.",
    ),
    expected_iterations: withDescription(SafeUintSchema, 'The same number as target_nonce.'),
    issued_at: withDescription(UnixSecondsSchema, 'When the challenge was issued (Unix seconds).'),
    expires_at: withDescription(
      UnixSecondsSchema,
      'After this time (Unix seconds) proofs are rejected with challenge_expired.',
    ),
  },
  { title: 'Challenge', description: 'A v4.0 challenge (POST /challenge response).' },
);
export type Challenge = Static<typeof ChallengeSchema>;

// ---------------------------------------------------------------------------------------------
// v4.0 proof and submission
// ---------------------------------------------------------------------------------------------

export const ProofSchema = Type.Object(
  {
    challenge_id: withDescription(IdSchema, 'The challenge this proof answers.'),
    challenge_hash: withDescription(
      Hex32Schema,
      "The challenge's hash; must equal the issued challenge's hash.",
    ),
    tensor_result_hash: withDescription(
      Hex32Schema,
      'Hash of the computed result tensor; recomputed by the validator.',
    ),
    mml_score: withDescription(
      Q16RatioSchema,
      "The result's compression score; must be at or below mml_threshold and equal to the recomputed score. An exact multiple of 1/65536.",
    ),
    path_signature: withDescription(
      Hex8Schema,
      'The 64-bit neural path of the result; recomputed by the validator.',
    ),
    path_distance: Type.Integer({
      minimum: 0,
      maximum: 64,
      description:
        'Hamming distance between path_signature and path_target; must be at or below path_distance_max.',
    }),
    computation_nonce: withDescription(SafeUintSchema, 'The nonce the miner found, an integer in [0, 2^53).'),
    computation_hash: withDescription(
      Hex32Schema,
      'Commitment over the proof fields and miner_pubkey; recomputed by the validator.',
    ),
    miner_pubkey: withDescription(
      PublicKeyHexSchema,
      'The registered miner that did the work and receives the reward.',
    ),
  },
  { title: 'Proof', description: 'A v4.0 proof of work for one challenge.' },
);
export type Proof = Static<typeof ProofSchema>;

export const SubmitRequestSchema = Type.Object(
  {
    proof: ProofSchema,
    signature: Type.Optional(
      withDescription(
        SignatureBytesSchema,
        "ed25519 signature by miner_pubkey over the proof's canonical bytes (proofMessage). Required by default (signature_required); a validator may accept unsigned proofs from legacy clients, but a signature present is always checked (signature_invalid).",
      ),
    ),
  },
  { title: 'SubmitRequest', description: 'POST /submit body: the proof envelope.' },
);
export type SubmitRequest = Static<typeof SubmitRequestSchema>;

export const SubmitResultSchema = Type.Object(
  {
    accepted: Type.Boolean({
      description:
        'True: the proof was accepted. Rejections are 4xx ErrorResponse bodies with a code, not accepted: false.',
    }),
    tx_sig: withDescription(
      SignatureHexSchema,
      "The validator's ed25519 signature (by its node key) over the acceptance receipt: utf8('PTM4/receipt') || 0x00 || lpString(challenge_id) || miner_pubkey(32) || computation_hash(32) || u64le(ledger_entry_id) || u64le(reward minor units) || u64le(accepted_at), 128 lowercase hex.",
    ),
    challenge_id: withDescription(IdSchema, 'The challenge that was answered.'),
    miner_pubkey: withDescription(PublicKeyHexSchema, 'The miner credited.'),
    reward: withDescription(AmountSchema, 'The reward credited, in whole units of token.'),
    token: withDescription(TokenSymbolSchema, 'The reward token (PTM).'),
    ledger_entry_id: withDescription(IdSchema, 'The ledger entry that records the reward.'),
    accepted_at: withDescription(
      UnixSecondsSchema,
      'When the proof was accepted (Unix seconds); signed in the receipt and equal to the ledger entry timestamp.',
    ),
  },
  {
    title: 'SubmitResult',
    description: 'POST /submit response (v4.0 shape: accepted, tx_sig, plus receipt fields).',
  },
);
export type SubmitResult = Static<typeof SubmitResultSchema>;

// ---------------------------------------------------------------------------------------------
// Miners and devices
// ---------------------------------------------------------------------------------------------

export const MinerAccountSchema = Type.Object(
  {
    pubkey: withDescription(PublicKeyHexSchema, "The miner's public key."),
    registered: Type.Boolean({ description: 'True when the key is registered (POST /devices/register).' }),
    device_type: nullable(DeviceTypeSchema, 'The registered device type; null when not registered.'),
    registered_at: nullable(UnixSecondsSchema, 'When the key was registered; null when not registered.'),
    balances: Type.Array(TokenAmountSchema, {
      maxItems: 32,
      description: 'Balance of every token the key holds.',
    }),
    proofs_accepted: Count('v4.0 proofs accepted for this key.'),
    proofs_rejected: Count('v4.0 proofs rejected for this key.'),
    blocks_accepted: Count('v4.1 blocks accepted for this key.'),
    rewards_total: withDescription(AmountSchema, 'Total mining rewards ever credited, in PTM.'),
    last_seen: nullable(UnixSecondsSchema, 'When the key last fetched work or submitted; null if never.'),
  },
  { title: 'MinerAccount', description: 'GET /miners/:pubkey: the miner account as recorded on the chain.' },
);
export type MinerAccount = Static<typeof MinerAccountSchema>;

export const DeviceRegisterRequestSchema = Type.Object(
  {
    pubkey: withDescription(
      PublicKeyHexSchema,
      "The device's public key; must equal the x-tm-pubkey header that signs the request.",
    ),
    device_type: withDescription(DeviceTypeInputSchema, 'The kind of device (cpu is an alias of native).'),
    port: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 65535,
        description:
          "v4.1: the local TCP port of the device's callback service (docs/protocol.md 4.17). The validator calls it back only at the address the registration came from. Omitted by v4.0 clients.",
      }),
    ),
    hashrate: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1e15,
        description:
          'The hash rate the device reports (hexchain nonces per second), shown to operators in GET /devices.',
      }),
    ),
  },
  {
    title: 'DeviceRegisterRequest',
    description:
      'POST /devices/register body. The request is signed with the x-tm-* signed-request headers by pubkey.',
  },
);
export type DeviceRegisterRequest = Static<typeof DeviceRegisterRequestSchema>;

export const DeviceRegisterResultSchema = Type.Object(
  {
    registered: Type.Literal(true, { description: 'Always true; failures are error responses.' }),
    pubkey: withDescription(PublicKeyHexSchema, 'The registered key.'),
    device_type: withDescription(DeviceTypeSchema, 'The registered device type.'),
    port: nullable(
      Type.Integer({ minimum: 1, maximum: 65535 }),
      'The callback port; null when none was given.',
    ),
    registered_at: withDescription(
      UnixSecondsSchema,
      'When the key was first registered (re-registering keeps it).',
    ),
    device_id: withDescription(
      IdSchema,
      'A stable identifier of the device, assigned at first registration.',
    ),
    callbacks: Type.Optional(
      Type.Enum(['none', 'on', 'relayed', 'off'], {
        type: 'string',
        description:
          'Whether the validator will call the port back (docs/protocol.md 4.17): none (no port), on (at the address this request came from), relayed (a status proxy forwarded the registration and calls the device itself), off (the address is public and the validator calls private addresses only, or callbacks are disabled: the device must poll). This validator always sends it; a validator without device callbacks leaves it out (the device polls).',
      }),
    ),
  },
  {
    title: 'DeviceRegisterResult',
    description: 'POST /devices/register response. Registering again updates type and port.',
  },
);
export type DeviceRegisterResult = Static<typeof DeviceRegisterResultSchema>;

export const DeviceSchema = Type.Object(
  {
    device_id: withDescription(IdSchema, 'The device identifier.'),
    pubkey: withDescription(PublicKeyHexSchema, "The device's public key."),
    device_type: withDescription(DeviceTypeSchema, 'The kind of device.'),
    port: nullable(Type.Integer({ minimum: 1, maximum: 65535 }), 'The v4.1 callback port; null when none.'),
    registered_at: withDescription(UnixSecondsSchema, 'When the device was registered.'),
    last_seen: nullable(UnixSecondsSchema, 'When the device last fetched work or submitted; null if never.'),
    hashrate_reported: nullable(
      Type.Integer({ minimum: 1, maximum: 1e15 }),
      'The hash rate the device reported at registration (nonces per second); null when it did not.',
    ),
    hashrate_1h: nullable(
      SafeUintSchema,
      'The hash rate its accepted blocks of the last hour stand for (the sum of their difficulties over 3600 s), as seen by the node that answers; null without a block.',
    ),
    blocks_1h: withDescription(
      SafeUintSchema,
      'Its blocks accepted in the last hour, as seen by the node that answers.',
    ),
    work: nullable(
      DeviceWorkSchema,
      'Its current v4.1 work, when this node issued it a challenge; null otherwise.',
    ),
    callback: DeviceCallbackHealthSchema,
  },
  { title: 'Device', description: 'A registered device.' },
);
export type Device = Static<typeof DeviceSchema>;

export const DevicesQuerySchema = Type.Object(
  {
    device_type: Type.Optional(
      withDescription(DeviceTypeInputSchema, 'Only devices of this type (cpu is an alias of native).'),
    ),
    limit: Type.Optional(PageLimitSchema),
    cursor: Type.Optional(CursorSchema),
  },
  { title: 'DevicesQuery', description: 'GET /devices query.' },
);
export type DevicesQuery = Static<typeof DevicesQuerySchema>;

export const DevicesResponseSchema = Type.Object(
  {
    ...pageProperties('devices', DeviceSchema, 'Registered devices, oldest registration first.'),
    by_type: Type.Object(
      {
        native: Count('Registered native devices.'),
        esp32: Count('Registered ESP32 boards.'),
        esp8266: Count('Registered ESP8266 boards.'),
      },
      { description: 'Count of all registered devices per type (not only this page).' },
    ),
    total: Count('Count of all registered devices.'),
  },
  { title: 'DevicesResponse', description: 'GET /devices: the device fleet.' },
);
export type DevicesResponse = Static<typeof DevicesResponseSchema>;

// ---------------------------------------------------------------------------------------------
// Pool info (GET /pool)
// ---------------------------------------------------------------------------------------------

export const PoolInfoSchema = Type.Object(
  {
    type: PoolStrategySchema,
    miners: Count('Miners that are members of the pool.'),
    stake: withDescription(AmountSchema, 'Total stake of the pool members, in PTM.'),
    minimum_stake: withDescription(
      AmountSchema,
      'The smallest stake_amount POST /pool/join accepts, in PTM.',
    ),
    fee: withDescription(
      FractionSchema,
      'The pool fee taken from each round reward, as a fraction (0.01 = 1 %).',
    ),
    round_duration: Count('Length of a reward round, in seconds.'),
    token: withDescription(TokenSymbolSchema, 'The token of stake and rewards (PTM).'),
    fee_bps: Count('The pool fee in basis points (100 = 1 %): the exact value behind fee.'),
    pplns_window_factor: Count(
      "The PPLNS window is this many blocks' worth of work: the newest shares whose scores (share difficulty / block difficulty of their challenge) add up to it.",
    ),
    pplns_window: Count(
      'The PPLNS window now in difficulty units at the current block difficulty (factor x D).',
    ),
    share_interval_s: Count(
      'The share interval vardiff aims at per member, in whole seconds, rounded to the nearest and at least 1 (for display; share_interval_ms is the value in use).',
    ),
    share_interval_ms: Type.Optional(
      Count(
        'The share interval vardiff aims at per member, in milliseconds: exactly the value it uses (validator setting poolShareIntervalMs; sent by every validator since 0.2).',
      ),
    ),
    blocks_found: Count('Blocks the pool has found.'),
    last_block: nullable(PoolBlockSchema, "The pool's last block; null before the first."),
  },
  { title: 'PoolInfo', description: 'GET /pool.' },
);
export type PoolInfo = Static<typeof PoolInfoSchema>;
