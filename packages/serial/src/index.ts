/**
 * @tensormine/serial: the host side of the tensormine device serial protocol
 * (docs/serial-protocol.md). It finds ESP32 mining boards on USB serial ports (and hotplugs
 * them), identifies each by its chip id, proves it computes correctly with a known-answer
 * self-test, and drives it as a miner DeviceBackend: framed, checksummed, acknowledged
 * messages, jobs sized to the board's rate, every result verified with @tensormine/protocol
 * before it is reported.
 */

export { SerialDeviceBackend, type SerialDeviceBackendOptions } from './backend.js';
export type { BindingInterface, PortInfo } from './binding.js';
export type { BoardInfo, BoardState, BoardStats, ResultJournal } from './board-info.js';
export { type DecoderStats, FrameDecoder, type FrameDecoderOptions } from './codec/decoder.js';
export {
  encodeFrame,
  FRAME_OVERHEAD,
  FRAME_VERSION,
  type Frame,
  frameCrc,
  MAX_FRAME_BYTES,
  MAX_PAYLOAD,
} from './codec/frame.js';
export {
  ACKED,
  type AckMessage,
  type BootMessage,
  CAPABILITIES,
  type CancelMessage,
  type DeviceMessage,
  decodeMessage,
  ERROR_CODES,
  ERROR_NAMES,
  type ErrorMessage,
  encodeMessage,
  encodeMessageFrame,
  type HelloMessage,
  type HelloReqMessage,
  type HexResultMessage,
  type HostMessage,
  isHostMessage,
  JOB_DONE_REASONS,
  JOB_HEX_BYTES,
  JOB_TENSOR_BYTES,
  type JobDoneMessage,
  type JobHexMessage,
  type JobTensorMessage,
  MESSAGE_TYPES,
  type MessageName,
  messageName,
  type ProgressMessage,
  RESET_REASONS,
  RESULT_HEX_BYTES,
  RESULT_TENSOR_BYTES,
  type RebootMessage,
  type ResultMessage,
  type SerialMessage,
  type SetBaudMessage,
  type TensorResultMessage,
} from './codec/messages.js';
export { MAX_CHUNK, type NonceChunk, NonceCursor } from './cursor.js';
export {
  ESP32_USB_SERIAL_CHIPS,
  listBoardPorts,
  listLinuxSysfs,
  listPorts,
  noBoardsHelp,
  UDEV_RULES_PATH,
  type UsbSerialChip,
  usbSerialChip,
} from './discovery.js';
export { SerialError, type SerialErrorCode } from './errors.js';
export {
  type FleetBoardEvents,
  type FleetPort,
  SerialFleet,
  type SerialFleetOptions,
} from './fleet.js';
export { boardSupports, capabilityNames, jobMessage } from './jobs.js';
export { LINK_DEGRADED_EVENTS, type LinkCounts, LinkHealth } from './link-health.js';
export {
  hexKnownAnswer,
  type KnownAnswer,
  knownAnswerJobs,
  sameResult,
  tensorKnownAnswer,
} from './selftest.js';
export {
  BoardSession,
  type BoardSessionOptions,
  chipIdHex,
  DEFAULT_TIMING,
  type SelfTestReport,
  type SerialTiming,
  type SessionEvents,
  type SessionState,
  type SessionStats,
} from './session.js';
export {
  DEFAULT_BAUD_RATE,
  defaultBinding,
  SerialTransport,
  type SerialTransportOptions,
} from './transport.js';
