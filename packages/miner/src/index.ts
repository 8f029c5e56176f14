/**
 * @tensormine/miner: the CPU mining engine of the proof-of-tensor network. Fast kernels
 * (hexchain SHA-256 with midstate, v4.0 tensor iterations), worker threads driven through
 * shared memory, the mining loop over a WorkSource, a durable journal of results, a local
 * control API (`@tensormine/miner/control-api`) and an offline benchmark. Every result is verified with @tensormine/protocol
 * before it is reported.
 */

export { type BenchCase, type BenchOptions, type BenchResult, bench, benchJobs } from './bench.js';
// The control API's server is `@tensormine/miner/control-api` (it loads Fastify); what it
// serves is plain data from here.
export { systemInfo } from './control/info.js';
export { registerMinerSeries } from './control/metrics.js';
export { applyCpuChange, ControlRefusal, type ControlTarget, minerControlTarget } from './control/target.js';
export type {
  DeviceBackend,
  DeviceEvents,
  DeviceHashrate,
  DeviceNotice,
  DeviceNoticeKind,
  DeviceSelfTest,
  DeviceState,
  DeviceUnitCounters,
  DeviceUnitInfo,
} from './device.js';
export { MiningEngine, type MiningEngineOptions } from './engine.js';
export { MinerError, type MinerErrorCode } from './errors.js';
export { formatDifficulty, formatHashrate, formatLogEvent } from './format.js';
export {
  type FoundMeta,
  type FoundResult,
  type FoundSigner,
  type HexchainFound,
  hashDifficulty,
  pathDifficulty,
  type ResultRejection,
  resultFromNonce,
  type SignedHexSubmission,
  type SignedProof,
  signFound,
  type TensorFound,
  verifyFound,
} from './found.js';
export { HashrateMeter, type HashrateWindows, sumWindows, WINDOW_MS } from './hashrate.js';
export {
  checkJob,
  expectedHashes,
  type HexchainJob,
  hexchainJob,
  type MiningJob,
  NONCE_SPACE_END,
  protocolVersion,
  type TensorJob,
  tensorJob,
  withNonceRange,
} from './job.js';
export { Journal, type JournalEntry, type JournalOptions } from './journal.js';
export { KERNEL_CHOICES, type KernelChoice, type KernelName, resolveKernel } from './kernels/choice.js';
export {
  type BlockSearchResult,
  type HexchainKernelJob,
  hexchainHash,
  type PreparedHexchain,
  prepareHexchain,
  searchBlock,
} from './kernels/hexchain.js';
export { missingCpuFlags, NATIVE_CPU_FLAGS } from './kernels/native/cpu.js';
export { type KernelSelection, type SelectKernelOptions, selectKernel } from './kernels/select.js';
export {
  searchTensor,
  type TensorKernelTask,
  TensorSearch,
  type TensorSearchResult,
} from './kernels/tensor.js';
export { type WarmUpReport, warmUpJsKernels } from './kernels/warm-up.js';
export { wasmSimdSupported } from './kernels/wasm.js';
export {
  type DeviceOutcomes,
  type DeviceSummary,
  Miner,
  type MinerEvents,
  type MinerLogEvent,
  type MinerOptions,
  type MinerStats,
  POOL_MAX_IN_FLIGHT,
  POOL_QUEUE_MAX,
  type ShareDropReason,
} from './miner.js';
export {
  type MiningStrategy,
  POOL,
  SOLO,
  type SubmitOutcome,
  type WorkSource,
  type WorkSourceEvents,
} from './work-source.js';
export type { ReferenceCheck, WorkerState } from './worker/protocol.js';
