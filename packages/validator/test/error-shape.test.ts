/**
 * Every answer that is an error has the documented shape (`{ statusCode, code, error, message
 * [, details] }`, the code from the one table, its status), also the ones produced before any
 * route runs: over every route, unknown and wrong methods, over-long and badly encoded path
 * parameters, raw non-ASCII bytes, huge headers. Over a real socket: Node's HTTP parser is part
 * of what is tested.
 */
import { connect } from 'node:net';
import { ERROR_CODES, ErrorResponseSchema, isErrorCode, routesOf } from '@tensormine/protocol';
import { Value } from 'typebox/value';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createValidator, type Validator } from '../src/index.js';

let validator: Validator;
let port: number;

beforeAll(async () => {
  validator = await createValidator({ dataDir: ':memory:', logger: false });
  port = Number(new URL(await validator.listen({ host: '127.0.0.1', port: 0 })).port);
});
afterAll(() => validator.close());

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends raw bytes on a fresh connection and parses the HTTP answer. */
function raw(request: Buffer | string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(request));
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', () => {});
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) return reject(new Error(`no HTTP answer: ${JSON.stringify(text)}`));
      const [statusLine, ...headerLines] = text.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      let body = text.slice(split + 4);
      if (headers['transfer-encoding'] === 'chunked') {
        let out = '';
        for (let rest = body; ; ) {
          const n = Number.parseInt(rest, 16);
          if (!n) break;
          const start = rest.indexOf('\r\n') + 2;
          out += rest.slice(start, start + n);
          rest = rest.slice(start + n + 2);
        }
        body = out;
      }
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body });
    });
  });
}

function request(method: string, path: string | Buffer, extraHeaders = ''): Buffer {
  return Buffer.concat([
    Buffer.from(`${method} `),
    typeof path === 'string' ? Buffer.from(path, 'latin1') : path,
    Buffer.from(
      ` HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: 0\r\n${extraHeaders}\r\n`,
    ),
  ]);
}

/** Asserts the documented error shape and returns the code. */
function expectErrorShape(answer: RawAnswer, context: string): string {
  let body: unknown;
  try {
    body = JSON.parse(answer.body);
  } catch {
    throw new Error(`${context}: not JSON: ${answer.status} ${answer.body.slice(0, 200)}`);
  }
  expect(Value.Check(ErrorResponseSchema, body), `${context}: ${answer.body.slice(0, 300)}`).toBe(true);
  const b = body as { statusCode: number; code: string };
  expect(isErrorCode(b.code), context).toBe(true);
  expect(b.statusCode, context).toBe(answer.status);
  expect(ERROR_CODES[b.code as keyof typeof ERROR_CODES].status, context).toBe(answer.status);
  return b.code;
}

/** A concrete path for a route: every parameter filled with `value`. */
function concrete(url: string, value: string): string {
  return url
    .split('/')
    .map((p) => (p.startsWith(':') ? value : p))
    .join('/');
}

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
