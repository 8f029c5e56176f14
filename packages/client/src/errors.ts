import { ERROR_CODES, type ErrorCode, isErrorCode } from '@tensormine/protocol';

/**
 * The errors of the client. One base class, {@link TensormineError}, with a literal `name`, a
 * stable `code`, the request it belongs to (method, URL, the validator it went to), `details`,
 * the `cause` chain and a pointer into the docs. Every subclass has its own literal `name`.
 *
 * `instanceof` works across two copies of this package (two versions in one dependency tree):
 * each class checks a `Symbol.for` brand instead of the prototype chain.
 */

/** The `name` of every error class of the client. */
export type TensormineErrorName =
  | 'TensormineError'
  | 'ValidatorError'
  | 'UnexpectedResponseError'
  | 'NetworkError'
  | 'TimeoutError'
  | 'AbortedError'
  | 'InvalidInputError'
  | 'ProtocolMismatchError'
  | 'KeyFileError';

/** Where the docs live, relative to the repository root (GitHub renders the anchors). */
const SDK_DOCS = 'docs/sdk.md';

function brand(name: TensormineErrorName): symbol {
  return Symbol.for(`@tensormine/client/${name}`);
}

const BRANDS = {
  TensormineError: brand('TensormineError'),
  ValidatorError: brand('ValidatorError'),
  UnexpectedResponseError: brand('UnexpectedResponseError'),
  NetworkError: brand('NetworkError'),
  TimeoutError: brand('TimeoutError'),
  AbortedError: brand('AbortedError'),
  InvalidInputError: brand('InvalidInputError'),
  ProtocolMismatchError: brand('ProtocolMismatchError'),
  KeyFileError: brand('KeyFileError'),
} as const satisfies Record<TensormineErrorName, symbol>;

function hasBrand(value: unknown, symbol: symbol): boolean {
  return typeof value === 'object' && value !== null && symbol in value;
}

/** The request an error belongs to. */
export interface RequestInfo {
  /** The operationId of the route (see ROUTES in @tensormine/protocol). */
  readonly operationId?: string | undefined;
  readonly method?: string | undefined;
  /** The full URL of the request, query string included. */
  readonly url?: string | undefined;
  /** The base URL of the service it was sent to (with several validators: which one). */
  readonly endpoint?: string | undefined;
}

export interface TensormineErrorOptions extends RequestInfo {
  readonly code: string;
  readonly status?: number | undefined;
  readonly details?: Readonly<Record<string, unknown>> | undefined;
  readonly cause?: unknown;
  /** The docs section, e.g. `docs/errors.md#proof_replayed`. */
  readonly docsPath?: string | undefined;
}

/**
 * The base of every error the client throws.
 *
 * `message` is `shortMessage`, then the request (`Request: POST http://.../submit`) and the docs
 * pointer on lines of their own. Branch on `code` (stable) or `instanceof`, never on messages.
 */
export class TensormineError extends Error {
  override readonly name: TensormineErrorName = 'TensormineError';
  /** A stable machine-readable code. For a ValidatorError, the validator's code (docs/errors.md). */
  readonly code: string;
  /** The one-line explanation, without the request and docs lines. */
  readonly shortMessage: string;
  /** The HTTP status, when the error is an HTTP response. */
  readonly status: number | undefined;
  readonly operationId: string | undefined;
  readonly method: string | undefined;
  readonly url: string | undefined;
  readonly endpoint: string | undefined;
  /** Structured context: the values involved, never a secret. */
  readonly details: Readonly<Record<string, unknown>> | undefined;
  /** Where this error is explained, relative to the repository root. */
  readonly docsPath: string;

  constructor(shortMessage: string, options: TensormineErrorOptions) {
    const docsPath = options.docsPath ?? `${SDK_DOCS}#errors`;
    const lines = [shortMessage, ''];
    if (options.method !== undefined && options.url !== undefined) {
      lines.push(`Request: ${options.method} ${options.url}`);
    }
    lines.push(`Docs: ${docsPath}`);
    super(lines.join('\n'), options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code;
    this.shortMessage = shortMessage;
    this.status = options.status;
    this.operationId = options.operationId;
    this.method = options.method;
    this.url = options.url;
    this.endpoint = options.endpoint;
    this.details = options.details;
    this.docsPath = docsPath;
    Object.defineProperty(this, BRANDS.TensormineError, { value: true });
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return hasBrand(value, BRANDS.TensormineError);
  }

  /**
   * Walks the `cause` chain (this error first) and returns the first error for which `fn` is true.
   * `error.walk((e) => e instanceof NetworkError)`.
   */
  walk(fn: (error: unknown) => boolean): unknown {
    let current: unknown = this;
    for (let depth = 0; current !== undefined && current !== null && depth < 32; depth++) {
      if (fn(current)) return current;
      current = (current as { cause?: unknown }).cause;
    }
    return undefined;
  }
}

function mark(error: TensormineError, name: TensormineErrorName): void {
  Object.defineProperty(error, BRANDS[name], { value: true });
}

/** The request parts of an error, for subclasses. */
function requestParts(request: RequestInfo | undefined): RequestInfo {
  return {
    operationId: request?.operationId,
    method: request?.method,
    url: request?.url,
    endpoint: request?.endpoint,
  };
}

// ---------------------------------------------------------------------------------------------
// Answers of the server
// ---------------------------------------------------------------------------------------------

/** The body of every 4xx and 5xx of every service (ErrorResponse in @tensormine/protocol). */
export interface ErrorBody {
  readonly statusCode: number;
  readonly code: string;
  readonly error: string;
  readonly message: string;
  readonly details?: Readonly<Record<string, unknown>> | undefined;
}

/**
 * The validator (or another service) answered with an ErrorResponse: `code` is its stable code,
 * one to one from ERROR_CODES (docs/errors.md), `status` the HTTP status, `details` its details.
 * A code this client does not know (a newer server) is kept as it is; treat it like a generic
 * error of its status.
 */
export class ValidatorError extends TensormineError {
  override readonly name = 'ValidatorError' as const;
  /** The server's code; one of ERROR_CODES unless the server is newer than this client. */
  declare readonly code: ErrorCode | (string & {});
  declare readonly status: number;
  /** The server's own message (what was expected and what arrived). */
  readonly serverMessage: string;
  /** For `rate_limited`: how long the server asks to wait, in milliseconds. */
  readonly retryAfterMs: number | undefined;

  constructor(body: ErrorBody, request?: RequestInfo, options: { retryAfterMs?: number | undefined } = {}) {
    const known = isErrorCode(body.code);
    super(`${body.message} (${body.code}, HTTP ${body.statusCode})`, {
      ...requestParts(request),
      code: body.code,
      status: body.statusCode,
      details: body.details,
      docsPath: known ? `docs/errors.md#${body.code}` : `${SDK_DOCS}#validatorerror`,
    });
    this.serverMessage = body.message;
    this.retryAfterMs = options.retryAfterMs ?? retryAfterFromDetails(body.details);
    mark(this, 'ValidatorError');
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return hasBrand(value, BRANDS.ValidatorError);
  }

  /** True when `code` is one of the codes this client knows (ERROR_CODES). */
  get isKnownCode(): boolean {
    return isErrorCode(this.code);
  }

  /** The description of the code from ERROR_CODES, when known. */
  get description(): string | undefined {
    return isErrorCode(this.code) ? ERROR_CODES[this.code].description : undefined;
  }
}

function retryAfterFromDetails(details: Readonly<Record<string, unknown>> | undefined): number | undefined {
  const seconds = details?.retry_after_s;
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

/**
 * The server answered with something that is not the documented shape: a body that is not JSON,
 * an error status without an ErrorResponse (a proxy's HTML page), or a reply that does not match
 * the route's schema. `code` is `unexpected_response`.
 */
export class UnexpectedResponseError extends TensormineError {
  override readonly name = 'UnexpectedResponseError' as const;
  declare readonly code: 'unexpected_response';

  constructor(
    shortMessage: string,
    request: RequestInfo,
    options: { status?: number; details?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(shortMessage, {
      ...requestParts(request),
      code: 'unexpected_response',
      status: options.status,
      details: options.details,
      cause: options.cause,
      docsPath: `${SDK_DOCS}#unexpectedresponseerror`,
    });
    mark(this, 'UnexpectedResponseError');
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return hasBrand(value, BRANDS.UnexpectedResponseError);
  }
}

// ---------------------------------------------------------------------------------------------
// Transport
// ---------------------------------------------------------------------------------------------

/**
 * The request did not get an answer: connection refused, reset, DNS failure. `requestSent` is
 * false when the connection could not even be opened (the server cannot have seen the request).
 * The undici error is the `cause`.
 */
export class NetworkError extends TensormineError {
  override readonly name = 'NetworkError' as const;
  declare readonly code: 'network_error';
  /** False when the connection was never established: the request provably did not reach the server. */
  readonly requestSent: boolean;

  constructor(request: RequestInfo, cause: unknown, requestSent: boolean) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(`could not reach ${request.endpoint ?? 'the server'}: ${reason}`, {
      ...requestParts(request),
      code: 'network_error',
      cause,
      details: { requestSent, ...(errorCodeOf(cause) ? { errno: errorCodeOf(cause) } : {}) },
      docsPath: `${SDK_DOCS}#networkerror`,
    });
    this.requestSent = requestSent;
    mark(this, 'NetworkError');
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return hasBrand(value, BRANDS.NetworkError);
  }
}

function errorCodeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** No complete answer within `timeoutMs` (one attempt). */
export class TimeoutError extends TensormineError {
  override readonly name = 'TimeoutError' as const;
  declare readonly code: 'timeout';
  readonly timeoutMs: number;

  constructor(request: RequestInfo, timeoutMs: number) {
    super(`no answer from ${request.endpoint ?? 'the server'} within ${timeoutMs} ms`, {
      ...requestParts(request),
      code: 'timeout',
      details: { timeoutMs },
      docsPath: `${SDK_DOCS}#timeouterror`,
    });
    this.timeoutMs = timeoutMs;
    mark(this, 'TimeoutError');
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return hasBrand(value, BRANDS.TimeoutError);
  }
}

/** The caller's AbortSignal fired; its `reason` is the `cause`. */
export class AbortedError extends TensormineError {
  override readonly name = 'AbortedError' as const;
  declare readonly code: 'aborted';

  constructor(request: RequestInfo, reason: unknown) {
    const why = reason instanceof Error ? `: ${reason.message}` : '';
    super(`the request was aborted by the caller${why}`, {
      ...requestParts(request),
      code: 'aborted',
      cause: reason,
      docsPath: `${SDK_DOCS}#abortederror`,
    });
    mark(this, 'AbortedError');
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return hasBrand(value, BRANDS.AbortedError);
  }
}

// ---------------------------------------------------------------------------------------------
// Local checks
// ---------------------------------------------------------------------------------------------

/** One problem found in an input: where, what was expected, what arrived. */
export interface InputProblem {
  /** Where, e.g. `body.amount`, `params.q`, `coord`. */
  readonly path: string;
  /** The whole sentence: `body.amount: expected a string, got 12.5`. */
  readonly message: string;
}

/**
 * An input failed a local check before anything was sent: the route's schema, a coordinate
 * (q + r + s = 0), an amount (decimals of its token), a missing signer or admin token.
 * `details.errors` lists every problem; the message shows the first.
 */
export class InvalidInputError extends TensormineError {
  override readonly name = 'InvalidInputError' as const;
  declare readonly code: 'invalid_input';
  readonly problems: readonly InputProblem[];

  constructor(
    problems: readonly InputProblem[],
    request: RequestInfo = {},
    options: { cause?: unknown } = {},
  ) {
    const first = problems[0]?.message ?? 'invalid input';
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
    const where = request.operationId ? `${request.operationId}: ` : '';
    super(`${where}${first}${more}`, {
      operationId: request.operationId,
      endpoint: request.endpoint,
      code: 'invalid_input',
      details: { errors: problems },
      cause: options.cause,
      docsPath: `${SDK_DOCS}#invalidinputerror`,
    });
    this.problems = problems;
    mark(this, 'InvalidInputError');
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return hasBrand(value, BRANDS.InvalidInputError);
  }
}

/**
 * The protocol generation does not fit: v4.1 forced against a validator without the hexchain
 * endpoints, a v4.0 challenge that fails its self-consistency checks, or work of one version
 * submitted as another.
 */
export class ProtocolMismatchError extends TensormineError {
  override readonly name = 'ProtocolMismatchError' as const;
  declare readonly code: 'protocol_mismatch';

  constructor(shortMessage: string, request: RequestInfo = {}, options: { cause?: unknown } = {}) {
    super(shortMessage, {
      ...requestParts(request),
      code: 'protocol_mismatch',
      cause: options.cause,
      docsPath: `${SDK_DOCS}#protocolmismatcherror`,
    });
    mark(this, 'ProtocolMismatchError');
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return hasBrand(value, BRANDS.ProtocolMismatchError);
  }
}

/** Codes of {@link KeyFileError}. */
export type KeyFileErrorCode =
  | 'key_file_not_found'
  | 'key_file_exists'
  | 'key_file_permissions'
  | 'key_file_invalid'
  | 'key_file_io';

/**
 * A key file could not be loaded or saved. The message names the file and the problem, never
 * the secret key or any part of it.
 */
export class KeyFileError extends TensormineError {
  override readonly name = 'KeyFileError' as const;
  declare readonly code: KeyFileErrorCode;
  readonly path: string;

  constructor(code: KeyFileErrorCode, path: string, shortMessage: string, options: { cause?: unknown } = {}) {
    super(shortMessage, {
      code,
      details: { path },
      cause: options.cause,
      docsPath: `${SDK_DOCS}#key-files`,
    });
    this.path = path;
    mark(this, 'KeyFileError');
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return hasBrand(value, BRANDS.KeyFileError);
  }
}
