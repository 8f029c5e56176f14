/**
 * Every answer that is an error has the documented shape (`{ statusCode, code, error, message
 * [, details] }`, the code from the one table, its status), also the ones produced before any
 * route runs: over every route, unknown and wrong methods, over-long and badly encoded path
 * parameters, raw non-ASCII bytes, huge headers. Over a real socket: Node's HTTP parser is part
 * of what is tested.
 */
import { routesOf } from '@tensormine/protocol';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  concretePath as concrete,
  expectErrorShape,
  httpRequest,
  type RawAnswer,
  rawRequest,
} from '../../../test-support/raw-http.ts';
import { createValidator, type Validator } from '../src/index.js';

let validator: Validator;
let port: number;

beforeAll(async () => {
  validator = await createValidator({ dataDir: ':memory:', logger: false });
  port = Number(new URL(await validator.listen({ host: '127.0.0.1', port: 0 })).port);
});
afterAll(() => validator.close());

const raw = (bytes: Buffer | string): Promise<RawAnswer> => rawRequest(port, bytes);
const request = (method: string, path: string | Buffer, extraHeaders = ''): Buffer =>
  httpRequest(method, path, { headers: extraHeaders });

const routes = routesOf('validator');
const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'];

describe('every error has the documented shape', () => {
  test('a wrong method on every route is 405 method_not_allowed with Allow', async () => {
    const byUrl = new Map<string, Set<string>>();
    for (const r of routes) {
      if (!validator.registeredRoutes.includes(r.operationId as never)) continue;
      byUrl.set(r.url, new Set([...(byUrl.get(r.url) ?? []), r.method]));
    }
    expect(byUrl.size).toBeGreaterThan(10);
    for (const [url, methods] of byUrl) {
      const path = concrete(url, 'ab');
      for (const method of METHODS.filter((m) => !methods.has(m))) {
        const answer = await raw(request(method, path));
        // A concrete path may also match a static route of another method (e.g. /x/:id vs /x/list).
        if (answer.status !== 405) continue;
        expect(expectErrorShape(answer, `${method} ${path}`)).toBe('method_not_allowed');
        const allow = answer.headers.allow!.split(', ');
        for (const m of methods) expect(allow, `${method} ${path}`).toContain(m);
      }
      const wrong = METHODS.find((m) => !methods.has(m))!;
      const answer = await raw(request(wrong, path));
      expect(answer.status, `${wrong} ${path}`).not.toBe(404);
      expectErrorShape(answer, `${wrong} ${path}`);
    }
  });

  test('an unknown method, a raw non-ASCII byte, bad percent-encoding, a long parameter, huge headers: every route', async () => {
    const seen = new Set<string>();
    for (const r of routes) {
      if (!validator.registeredRoutes.includes(r.operationId as never)) continue;
      const cases: [string, Buffer | string][] = [
        ['unknown method', request('FROBNICATE', concrete(r.url, 'ab'))],
        [
          'raw non-ASCII byte',
          request(
            r.method,
            Buffer.concat([Buffer.from(`${concrete(r.url, 'ab')}`), Buffer.from([0xe9, 0x80])]),
          ),
        ],
        ['huge headers', request(r.method, concrete(r.url, 'ab'), `X-Big: ${'a'.repeat(20_000)}\r\n`)],
      ];
      if (r.url.includes(':')) {
        cases.push(['bad percent-encoding', request(r.method, concrete(r.url, '%E0%A4%A'))]);
        cases.push(['long parameter', request(r.method, concrete(r.url, 'z'.repeat(5000)))]);
      } else {
        cases.push(['bad percent-encoding', request(r.method, `${r.url}/%E0%A4%A`)]);
      }
      for (const [name, bytes] of cases) {
        const answer = await raw(bytes);
        const context = `${name}: ${r.method} ${r.url}`;
        const code = expectErrorShape(answer, context);
        seen.add(code);
        expect(answer.body, context).not.toContain('zzzzzzzzzz'); // the path is never echoed
        expect(answer.body, context).not.toContain('FST_');
        if (name === 'huge headers') expect(code, context).toBe('headers_too_large');
        if (name === 'unknown method' || name === 'raw non-ASCII byte')
          expect(code, context).toBe('bad_request');
        if (name === 'long parameter') expect(code, context).toBe('uri_too_long');
        if (name === 'bad percent-encoding' && r.url.includes(':')) expect(code, context).toBe('bad_request');
      }
    }
    expect([...seen].sort()).toEqual(
      expect.arrayContaining(['bad_request', 'headers_too_large', 'uri_too_long']),
    );
  });

  test('an unknown path is 404 not_found; a very long one is not echoed whole', async () => {
    const answer = await raw(request('GET', `/nope/${'y'.repeat(3000)}`));
    expect(expectErrorShape(answer, 'unknown path')).toBe('not_found');
    expect(answer.body.length).toBeLessThan(600);
  });
});
