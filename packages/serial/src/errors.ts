import { CodedError } from '@tensormine/protocol';

/** The stable codes of SerialError. */
export type SerialErrorCode =
  /** A frame header or payload that breaks docs/serial-protocol.md section 2 (encoding side). */
  | 'invalid_frame'
  /** A message payload of the wrong length or with a bad field (section 5, code 2). */
  | 'malformed_payload'
  /** A frame of a message type this host does not know (section 5, code 1). */
  | 'unknown_type'
  /** A message value that cannot be encoded (a job id of 0, a nonce above 2^53 - 1, ...). */
  | 'invalid_message'
  /** The port could not be opened, written or closed. */
  | 'port_failed'
  /** The board did not answer BOOT/HELLO/HELLO_REQ. */
  | 'no_hello'
  /** The board speaks another protocol version. */
  | 'unsupported_version'
  /** An acked frame was retransmitted 8 times without an ACK, or the heartbeat stopped. */
  | 'link_lost'
  /** The board answered an ACK with a non-zero status, or sent ERROR. */
  | 'device_error'
  /** The known-answer self-test failed: the board answered wrongly (final). */
  | 'self_test_failed'
  /** The known-answer self-test ran out of time (the session tries it again with backoff). */
  | 'self_test_timeout'
  /** A RESULT that the reference verifier rejects (or whose fields differ from the reference). */
  | 'wrong_result'
  /** A RESULT for a job id this host does not know (it cannot be verified). */
  | 'unknown_job'
  /** The session or fleet was closed. */
  | 'closed'
  /** An option out of range. */
  | 'invalid_option';

/**
 * The one error type of the serial package: a stable `code`, a message that says what was
 * expected and what arrived, optional details and cause (see CodedError).
 */
export class SerialError extends CodedError<SerialErrorCode> {
  static readonly brand = Symbol.for('@tensormine/serial/SerialError');
  override readonly name = 'SerialError';
}
