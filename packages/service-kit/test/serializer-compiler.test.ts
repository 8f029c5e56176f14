/**
 * The schema compilers of every service (serializer-compiler.ts, validator-compiler.ts): they
 * compile on first use, once per schema, so every schema of the protocol's route table is
 * compiled here, as Fastify would have at start, and the answers are those of the eager compile.
 */
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import { ErrorResponseSchema, ROUTE_LIST } from '@tensormine/protocol';
import type { TSchema } from 'typebox';
import { describe, expect, test } from 'vitest';
import { createServiceApp } from '../src/index.js';
import { lazySerializerFactory } from '../src/serializer-compiler.js';
import { validatorCompiler } from '../src/validator-compiler.js';

const PARTS = ['body', 'querystring', 'params'] as const;

describe('the schema compilers', () => {
  test('every response schema of the route table compiles with the serializer Fastify uses', () => {
    const eager = SerializerSelector()({}, undefined);
    let compiled = 0;
    for (const route of ROUTE_LIST) {
      for (const [httpStatus, schema] of Object.entries(route.schema.response)) {
        const definition = { schema, method: route.method, url: route.url, httpStatus };
        expect(() => eager(definition), `${route.operationId} ${httpStatus}`).not.toThrow();
        compiled++;
      }
    }
    // Every route answers its errors (4xx, 5xx) and most a 200 with a schema.
    expect(compiled).toBeGreaterThanOrEqual(2 * ROUTE_LIST.length);
  });

  test('every request schema of the route table compiles and validates', () => {
    let compiled = 0;
    for (const route of ROUTE_LIST) {
      for (const httpPart of PARTS) {
        const schema = (route.schema as Partial<Record<(typeof PARTS)[number], TSchema>>)[httpPart];
        if (schema === undefined) continue;
        const validate = validatorCompiler({ schema, httpPart, method: route.method, url: route.url });
        // The first call compiles: an object of the wrong shape is refused, never a throw.
        const result = validate(httpPart === 'body' ? 42 : {}) as { error?: unknown; value?: unknown };
        expect(result.error !== undefined || result.value !== undefined, route.operationId).toBe(true);
        compiled++;
      }
    }
    expect(compiled).toBeGreaterThan(0);
  });

  test('a lazy serializer writes what the eager one writes, unknown properties left out, for every route sharing a schema', () => {
    const eager = SerializerSelector()({}, undefined)({
      schema: ErrorResponseSchema,
      method: 'GET',
      url: '/a',
      httpStatus: '4xx',
    });
    const compile = lazySerializerFactory({}, undefined);
    const a = compile({ schema: ErrorResponseSchema, method: 'GET', url: '/a', httpStatus: '4xx' });
    const b = compile({ schema: ErrorResponseSchema, method: 'POST', url: '/b', httpStatus: '5xx' });
    const doc = {
      statusCode: 404,
      code: 'not_found',
      error: 'Not Found',
      message: 'no such thing',
      secret: 'never sent: not in the schema',
    };
    expect(a(doc)).toBe(eager(doc));
    expect(b(doc)).toBe(eager(doc));
    expect(JSON.parse(a(doc))).not.toHaveProperty('secret');
  });

  test('an app answers through them: a schema failure, an error and a success', async () => {
    const app = createServiceApp({
      service: 'hub',
      logLevel: 'silent',
      rateLimit: false,
      now: () => 0,
    });
    app.post(
      '/echo',
      {
        schema: {
          body: {
            type: 'object',
            properties: { n: { type: 'integer' } },
            required: ['n'],
            additionalProperties: false,
          },
          response: {
            200: {
              type: 'object',
              properties: { n: { type: 'integer' } },
              required: ['n'],
            },
            '4xx': ErrorResponseSchema,
          },
        },
      },
      async (request) => ({ ...(request.body as { n: number }), hidden: true }),
    );
    try {
      const ok = await app.inject({ method: 'POST', url: '/echo', payload: { n: 7 } });
      expect(ok.statusCode).toBe(200);
      expect(ok.json()).toEqual({ n: 7 });
      const bad = await app.inject({ method: 'POST', url: '/echo', payload: { n: 'seven' } });
      expect(bad.statusCode).toBe(400);
      expect(bad.json()).toMatchObject({ statusCode: 400, code: 'validation_failed' });
    } finally {
      await app.close();
    }
  });
});
