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
          'Structured context, depending on the code: validation_failed carries `errors` [{path, message}]; rate_limited carries `retry_after_s`; proof rejections carry the expected and received values (e.g. `expected`, `received`, `threshold`).',
      }),
    ),
  },
  {
    title: 'ErrorResponse',
    description: 'The one body shape of every 4xx and 5xx response of every service.',
  },
);
export type ErrorResponse = Static<typeof ErrorResponseSchema>;
