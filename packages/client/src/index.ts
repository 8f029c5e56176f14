/**
 * @tensormine/client: the typed SDK of the proof-of-tensor mining network. One client per
 * service, typed from the protocol's route table; undici underneath. See docs/sdk.md.
 */
export {
  type ActingBody,
  type AdminMethods,
  CLIENT_METHODS,
  createClient,
  type EconomyMethods,
  type HexchainMethods,
  type MinerMethods,
  type NodeMethods,
  type PoolMethods,
  TensormineClient,
  type TransferBody,
  type V40Methods,
  type ValidatorClientOptions,
  type ValidatorOperationId,
} from './client.js';
export { type EndpointState, normalizeBaseUrl } from './endpoints.js';
export * from './errors.js';
export { type EventStreamOptions, hexEventStream } from './event-stream.js';
export type {
  ClientEventListener,
  ClientEventMap,
  ClientEventName,
  FailoverEvent,
  FailoverReason,
  ProtocolEvent,
  RecoveredEvent,
  RequestEvent,
  ResponseEvent,
  RetryEvent,
} from './events.js';
export { AMOUNT_FIELDS, checkInput, type RouteInput } from './input.js';
export {
  defaultSlot,
  type GetWorkParams,
  type HexWork,
  type HexWorkResult,
  type ProtocolVersion,
  type SignedSolution,
  type SolveWorkOptions,
  type SubmitWorkResult,
  solveWork,
  type TensorWork,
  type TensorWorkResult,
  type Work,
  type WorkSolution,
} from './mining.js';
export {
  type CallOptions,
  type ClientOptions,
  DEFAULT_HEALTH_CHECK_INTERVAL_MS,
  DEFAULT_RETRY,
  DEFAULT_TIMEOUT_MS,
  type RetryOptions,
} from './options.js';
export {
  createHubClient,
  createServiceClient,
  createStatusClient,
  createTerminalClient,
  type RequestArgs,
  type RequestInput,
  ServiceClient,
  type ServiceOperationId,
} from './service-client.js';
export * from './signer.js';
export { USER_AGENT } from './transport.js';
