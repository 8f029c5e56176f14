/**
 * The base of every error class of the project: a stable string `code`, a message that says
 * what was expected and what arrived, optional details and a cause. A subclass declares
 * `static readonly brand = Symbol.for('<package>/<Class>')`; every instance carries the brands
 * of its class chain, so `instanceof` works even across two copies of a package (as undici
 * does), where a plain prototype check would fail.
 */
export abstract class CodedError<Code extends string = string> extends Error {
  readonly code: Code;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: Code, message: string, details?: Record<string, unknown>, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.details = details;
    for (let c: unknown = new.target; typeof c === 'function' && c !== Error; c = Object.getPrototypeOf(c)) {
      if (Object.hasOwn(c, 'brand'))
        Object.defineProperty(this, (c as unknown as { brand: symbol }).brand, { value: true });
    }
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    if (!Object.hasOwn(this, 'brand')) return Function.prototype[Symbol.hasInstance].call(this, value);
    return (
      typeof value === 'object' && value !== null && (this as unknown as { brand: symbol }).brand in value
    );
  }
}

/** Malformed input to a protocol function (`invalid_hex`, `invalid_coordinate`, ...). */
export class ProtocolError extends CodedError {
  static readonly brand = Symbol.for('@tensormine/protocol/ProtocolError');
  override readonly name = 'ProtocolError';
}
