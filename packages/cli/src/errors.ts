import {
  InvalidInputError,
  KeyFileError,
  NetworkError,
  TensormineError,
  TimeoutError,
  ValidatorError,
} from '@tensormine/client';

/** The exit codes of `miner` (docs/cli.md). */
export const EXIT = {
  /** Done; for `mine`, a clean shutdown (q, Ctrl+C, SIGTERM). */
  ok: 0,
  /** A failure that is not the user's input: a validator error answer, a worker that cannot start. */
  failure: 1,
  /** Bad usage: an unknown option, a malformed value, a bad config file. */
  usage: 2,
  /** No validator answered (one-shot commands; `mine` keeps retrying instead). */
  unreachable: 3,
  /** The key: no key file, a key file readable by others, a key not registered on the validator. */
  key: 4,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export type CliErrorCode = 'usage' | 'config' | 'key' | 'not_registered' | 'unreachable' | 'failure';

const EXIT_OF: Record<CliErrorCode, ExitCode> = {
  usage: EXIT.usage,
  config: EXIT.usage,
  key: EXIT.key,
  not_registered: EXIT.key,
  unreachable: EXIT.unreachable,
  failure: EXIT.failure,
};

const BRAND = Symbol.for('@tensormine/cli/CliError');

/**
 * An error the user can act on: printed as `miner: <message>` followed by the hint lines
 * (a command to run, a flag to change), and mapped to an exit code.
 */
export class CliError extends Error {
  override readonly name = 'CliError';
  readonly code: CliErrorCode;
  readonly hint: readonly string[];

  constructor(code: CliErrorCode, message: string, hint: readonly string[] = [], options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.hint = hint;
    Object.defineProperty(this, BRAND, { value: true });
  }

  get exitCode(): ExitCode {
    return EXIT_OF[this.code];
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && BRAND in value;
  }
}

/** The one line that explains a failure: the client's short message, else the message. */
export function describeError(error: unknown): string {
  if (error instanceof TensormineError) return error.shortMessage;
  return error instanceof Error ? error.message : String(error);
}

/**
 * The CliError of a failure of a one-shot command (status, lattice, register, devices):
 * unreachable validators, key files and local input checks get their own codes; any other
 * validator answer is a failure with the validator's code.
 */
export function toCliError(error: unknown): CliError {
  if (error instanceof CliError) return error;
  if (error instanceof KeyFileError) {
    return new CliError('key', error.shortMessage, keyHint(error.code), { cause: error });
  }
  if (error instanceof NetworkError || error instanceof TimeoutError) {
    return new CliError(
      'unreachable',
      `no answer from ${error.endpoint ?? 'the validator'} (${failureReason(error)})`,
      ['start a local validator with "miner validator start", or pass --url'],
      { cause: error },
    );
  }
  if (error instanceof ValidatorError) {
    return new CliError(
      'failure',
      `${error.endpoint ?? 'the validator'} answered ${error.status} ${error.code}: ${error.serverMessage}`,
      [],
      { cause: error },
    );
  }
  if (error instanceof InvalidInputError) {
    return new CliError('usage', inputProblems(error), [], { cause: error });
  }
  return new CliError('failure', describeError(error), [], { cause: error });
}

/**
 * The SDK's check of a request, in the command's words: every field once (its first problem),
 * named without the request part (`to`, not `body.to`) and without the operation's name.
 */
function inputProblems(error: InvalidInputError): string {
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const problem of error.problems) {
    const field = problem.path.replace(/^(body|query|params|headers)\./, '');
    if (seen.has(field)) continue;
    seen.add(field);
    lines.push(problem.message.replace(/^(body|query|params|headers)\./, ''));
  }
  return lines.length > 0 ? lines.join('; ') : error.shortMessage;
}

function keyHint(code: string): string[] {
  if (code === 'key_file_not_found') return ['create one with "miner keys generate"'];
  if (code === 'key_file_exists') return ['pass --force to replace it (the old key is lost)'];
  return [];
}

/** A network error, a timeout or a 5xx: the validator is away, not saying no. */
export function isUnreachable(error: unknown): boolean {
  return (
    error instanceof NetworkError ||
    error instanceof TimeoutError ||
    (error instanceof TensormineError && error.status !== undefined && error.status >= 500)
  );
}

/** Why a request failed, in a few words: `ECONNREFUSED`, `timeout after 3000 ms`, `503 service_unavailable`. */
export function failureReason(error: unknown): string {
  if (error instanceof NetworkError) {
    // A system code says it best (ECONNREFUSED, ENOTFOUND, ETIMEDOUT); undici's own codes less
    // so than its message ("other side closed").
    const errno = error.details?.errno;
    if (typeof errno === 'string' && /^E[A-Z]+$/.test(errno)) return errno;
    const cause = error.cause instanceof Error ? error.cause.message : undefined;
    return cause ?? (typeof errno === 'string' ? errno : error.shortMessage);
  }
  if (error instanceof TimeoutError) {
    const ms = error.details?.timeoutMs;
    return typeof ms === 'number' ? `timeout after ${ms} ms` : 'timeout';
  }
  if (error instanceof TensormineError && error.status !== undefined) return `${error.status} ${error.code}`;
  return describeError(error);
}
