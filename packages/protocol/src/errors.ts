const BRAND = Symbol.for('@tensormine/protocol/ProtocolError');

/**
 * The one error type thrown by the protocol package for malformed input: a stable `code`,
 * a message that says what was expected and what arrived, and optional details.
 * `instanceof` works across two copies of the package (brand via `Symbol.for`).
 */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
  readonly code: string;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: string, message: string, details?: Record<string, unknown>, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.details = details;
    Object.defineProperty(this, BRAND, { value: true });
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && BRAND in value;
  }
}
