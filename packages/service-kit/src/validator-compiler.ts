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

/** TypeBox's compiled checks, by schema object, per process (a check depends only on its schema). */
const compiled = new WeakMap<TSchema, ReturnType<typeof Compile>>();

function compiledCheck(schema: TSchema): ReturnType<typeof Compile> {
  let check = compiled.get(schema);
  if (check === undefined) {
    check = Compile(schema);
    compiled.set(schema, check);
  }
  return check;
}

/**
 * Validates with TypeBox: bodies exactly as sent (JSON already has types: a string is never
 * turned into a number), path, query and headers with strict coercion. A schema is compiled on
 * its first request, once per schema object (services share schemas, tests build many apps):
 * compiling every route's at start was part of a service's start (docs/benchmarks.md, the
 * miner's start). Every request is still validated by the compiled check; a test compiles every
 * schema of the protocol's route table (test/serializer-compiler.test.ts).
 */
export const validatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  let check: ReturnType<typeof Compile> | undefined;
  return (value: unknown) => {
    check ??= compiledCheck(schema);
    const converted = httpPart === 'body' ? value : coerce(schema as JsonSchema, value);
    if (check.Check(converted)) return { value: converted };
    return { error: check.Errors(converted) as never };
  };
};
