import SerializerSelector from '@fastify/fast-json-stringify-compiler';

type SerializerFactory = SerializerSelector.SerializerFactory;
type SerializerCompiler = SerializerSelector.SerializerCompiler;
type Serializer = SerializerSelector.Serializer;

/** Serializers of the default factory (no shared schemas, no options), by schema object, per process. */
const shared = new WeakMap<object, Serializer>();

/**
 * Fastify's response serializers (fast-json-stringify, exactly as Fastify builds them), compiled
 * on a route's first answer with that status instead of at start, and once per schema object:
 * every route answers its errors with the same `ErrorResponseSchema`, and a validator has about
 * 70 routes with three response schemas each, so compiling them all at start was most of a
 * service's start (docs/benchmarks.md, the miner's start). What is sent is unchanged: the
 * serializer of a schema depends only on the schema and the factory's shared schemas and
 * options, never on the route. A test compiles every response schema of the protocol's route
 * table with it (test/serializer-compiler.test.ts), so a schema fast-json-stringify refuses
 * still fails the build, not a user's first request.
 */
export const lazySerializerFactory: SerializerFactory = (externalSchemas, options) => {
  const compile: SerializerCompiler = SerializerSelector()(externalSchemas, options);
  const defaults =
    options === undefined &&
    (externalSchemas === undefined ||
      (typeof externalSchemas === 'object' &&
        externalSchemas !== null &&
        Object.keys(externalSchemas).length === 0));
  const compiled = defaults ? shared : new WeakMap<object, Serializer>();
  return (route) => {
    const { schema } = route;
    if (typeof schema !== 'object' || schema === null) return compile(route);
    let serialize: Serializer | undefined;
    return (doc) => {
      if (serialize === undefined) {
        serialize = compiled.get(schema);
        if (serialize === undefined) {
          serialize = compile(route);
          compiled.set(schema, serialize);
        }
      }
      return serialize(doc);
    };
  };
};
