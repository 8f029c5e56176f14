import Type, { type Static } from 'typebox';
import { ERROR_CODES, type ErrorCode } from '../error-codes.js';

/** Every stable error code, in table order. */
export const ERROR_CODE_LIST = Object.keys(ERROR_CODES) as ErrorCode[];

export const ErrorCodeSchema = Type.Enum(ERROR_CODE_LIST, {
  type: 'string',
  description:
    'A stable machine-readable error code from the ERROR_CODES table (docs/errors.md). Codes are never renamed or reused; new ones may be appended, so a client should treat an unknown code like a generic error of its HTTP status.',
});

export const ErrorResponseSchema = Type.Object(
  {
    statusCode: Type.Integer({
      minimum: 400,
      maximum: 599,
      description: 'The HTTP status code, repeated in the body.',
    }),
    code: ErrorCodeSchema,
    error: Type.String({
      maxLength: 64,
      description: 'The HTTP reason phrase of statusCode, e.g. "Unprocessable Entity".',
    }),
    message: Type.String({
      maxLength: 2000,
      description:
        'A human-readable explanation that says what was expected and what arrived, e.g. "mml_score 0.75 is above mml_threshold 0.5".',
    }),
    details: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description:
          'Structured context, depending on the code: validation_failed carries `errors` [{path, message, allowed?}] (`allowed`: every value a field limited to a list accepts, also named in the message); rate_limited carries `retry_after_s`; proof rejections carry the expected and received values (e.g. `expected`, `received`, `threshold`).',
      }),
    ),
  },
  {
    title: 'ErrorResponse',
    description: 'The one body shape of every 4xx and 5xx response of every service.',
  },
);
export type ErrorResponse = Static<typeof ErrorResponseSchema>;

/** One schema refusal as a validator reports it (TypeBox's error object, the parts we read). */
export interface SchemaIssueInput {
  readonly instancePath?: string;
  readonly message?: string;
  readonly keyword?: string;
  readonly params?: unknown;
}

/** One entry of `details.errors` of a `validation_failed` answer. */
export interface SchemaIssue {
  /** Where: the request part then the JSON pointer, e.g. `body/device_type`. */
  readonly path: string;
  /** What was expected, e.g. `must be one of native, esp32, esp8266, cpu`. */
  readonly message: string;
  /** For a field limited to a list of values (an enum): every value it accepts. */
  readonly allowed?: readonly (string | number)[];
}

/**
 * The entry of `details.errors` for one schema refusal: an enum refusal lists the values the
 * field accepts, in its message and in `allowed`, so a client can correct itself.
 */
export function schemaIssue(part: string, issue: SchemaIssueInput): SchemaIssue {
  const path = `${part}${issue.instancePath ?? ''}`;
  const allowed = (issue.params as { allowedValues?: unknown } | undefined)?.allowedValues;
  if (
    issue.keyword === 'enum' &&
    Array.isArray(allowed) &&
    allowed.every((v) => typeof v === 'string' || typeof v === 'number')
  ) {
    return { path, message: `must be one of ${allowed.join(', ')}`, allowed };
  }
  return { path, message: issue.message ?? 'invalid' };
}
