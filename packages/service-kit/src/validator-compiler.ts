import type { FastifySchemaCompiler } from 'fastify';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';

const INTEGER = /^-?(0|[1-9][0-9]*)$/;
const NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/;

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
}

/**
 * Converts the string values of path and query parameters to the types their schema
 * declares, strictly: "12" becomes 12, but "1.5", "0x1", "01" or "1e3" stay strings for an
 * integer and then fail validation. (TypeBox's Value.Convert would round "1.5" to 1 and
 * answer for the wrong coordinate.)
 */
function coerce(schema: JsonSchema, value: unknown): unknown {
  if (typeof value !== 'object' || value === null || !schema.properties) return value;
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const [key, sub] of Object.entries(schema.properties)) {
    const v = out[key];
    if (typeof v !== 'string') continue;
    const type = Array.isArray(sub.type) ? sub.type : [sub.type];
    if (type.includes('integer') && INTEGER.test(v) && Number.isSafeInteger(Number(v))) out[key] = Number(v);
    else if (type.includes('number') && NUMBER.test(v)) out[key] = Number(v);
    else if (type.includes('boolean') && (v === 'true' || v === 'false')) out[key] = v === 'true';
  }
  return out;
}

/**
 * Validates with TypeBox: bodies exactly as sent (JSON already has types: a string is never
 * turned into a number), path, query and headers with strict coercion.
 */
export const validatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = Compile(schema);
  return (value: unknown) => {
    const converted = httpPart === 'body' ? value : coerce(schema as JsonSchema, value);
    if (check.Check(converted)) return { value: converted };
    return { error: check.Errors(converted) as never };
  };
};
