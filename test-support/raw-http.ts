import { connect } from 'node:net';
import { ERROR_CODES, ErrorResponseSchema, isErrorCode } from '@tensormine/protocol';
import { Value } from 'typebox/value';
import { expect } from 'vitest';

/**
 * Raw HTTP/1.1 over a real socket, for the tests of what a service answers to malformed
 * requests: Node's HTTP parser and Fastify's own refusals are part of what is tested, so the
 * bytes are written as they are (no client that would fix them first).
 */

export interface RawAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** Sends raw bytes on a fresh connection to 127.0.0.1:`port` and parses the HTTP answer. */
export function rawRequest(port: number, request: Buffer | string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
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

/** The bytes of a request: `path` as given (latin1, or raw bytes), an optional body. */
export function httpRequest(
  method: string,
  path: string | Buffer,
  options: { readonly headers?: string; readonly body?: string | Buffer } = {},
): Buffer {
  const body =
    typeof options.body === 'string' ? Buffer.from(options.body) : (options.body ?? Buffer.alloc(0));
  return Buffer.concat([
    Buffer.from(`${method} `),
    typeof path === 'string' ? Buffer.from(path, 'latin1') : path,
    Buffer.from(
      ` HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: ${body.length}\r\n${options.headers ?? ''}\r\n`,
    ),
    body,
  ]);
}

/**
 * Asserts the documented error shape (`{ statusCode, code, error, message [, details] }`, a code
 * of the one table with its status, the status of the answer) and returns the code.
 */
export function expectErrorShape(answer: RawAnswer, context: string): string {
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
export function concretePath(url: string, value: string): string {
  return url
    .split('/')
    .map((p) => (p.startsWith(':') ? value : p))
    .join('/');
}

/**
 * Sends a service every kind of malformed request and asserts that each answer has the one
 * documented error shape with the code the validator gives the same request
 * (packages/validator/test/error-shape.test.ts): for every route an unknown method, a raw
 * non-ASCII byte in the path, huge headers, bad percent-encoding, an over-long parameter and a
 * wrong method; for every POST route (or, in a service without one, a POST to a GET route)
 * malformed JSON, a body that is not JSON and a body over `bodyLimit`; unknown paths.
 */
export async function expectMalformedRequestsRefused(
  port: number,
  routes: readonly { readonly method: string; readonly url: string }[],
  bodyLimit: number,
): Promise<void> {
  const send = (bytes: Buffer) => rawRequest(port, bytes);
  for (const r of routes) {
    const path = concretePath(r.url, 'ab');
    const withParams = r.url.includes(':');
    const cases: [string, Buffer, string | undefined][] = [
      ['unknown method', httpRequest('FROBNICATE', path), 'bad_request'],
      [
        'raw non-ASCII byte',
        httpRequest(r.method, Buffer.concat([Buffer.from(path), Buffer.from([0xe9, 0x80])])),
        'bad_request',
      ],
      [
        'huge headers',
        httpRequest(r.method, path, { headers: `X-Big: ${'a'.repeat(20_000)}\r\n` }),
        'headers_too_large',
      ],
      withParams
        ? ['bad percent-encoding', httpRequest(r.method, concretePath(r.url, '%E0%A4%A')), 'bad_request']
        : ['bad percent-encoding', httpRequest(r.method, `${r.url}/%E0%A4%A`), undefined],
    ];
    if (withParams)
      cases.push([
        'long parameter',
        httpRequest(r.method, concretePath(r.url, 'z'.repeat(5000))),
        'uri_too_long',
      ]);
    for (const [name, bytes, expected] of cases) {
      const context = `${name}: ${r.method} ${r.url}`;
      const answer = await send(bytes);
      const code = expectErrorShape(answer, context);
      if (expected !== undefined) expect(code, context).toBe(expected);
      expect(answer.body, context).not.toContain('zzzzzzzzzz'); // the path is never echoed
      expect(answer.body, context).not.toContain('FST_');
    }
    const wrong = r.method === 'GET' ? 'PUT' : 'GET';
    const answer = await send(httpRequest(wrong, path));
    if (answer.status !== 405) continue; // the path may be another route's too
    expect(expectErrorShape(answer, `${wrong} ${r.url}`)).toBe('method_not_allowed');
    expect(answer.headers.allow?.split(', '), `${wrong} ${r.url}`).toContain(r.method);
    expect(answer.headers['x-content-type-options'], `${wrong} ${r.url}`).toBe('nosniff');
  }

  const posts = routes.filter((r) => r.method === 'POST');
  const json = 'Content-Type: application/json\r\n';
  for (const r of posts.length > 0 ? posts : routes.slice(0, 1)) {
    const path = concretePath(r.url, 'ab');
    const cases: [string, Buffer, string][] = [
      [
        'malformed raw JSON',
        httpRequest('POST', path, { headers: json, body: '{"wallet": ' }),
        'invalid_json',
      ],
      [
        'a body that is not JSON',
        httpRequest('POST', path, { headers: 'Content-Type: text/plain\r\n', body: 'hello' }),
        'unsupported_media_type',
      ],
      [
        'a body over the limit',
        httpRequest('POST', path, { headers: json, body: JSON.stringify({ pad: 'x'.repeat(bodyLimit) }) }),
        'body_too_large',
      ],
    ];
    for (const [name, bytes, expected] of cases) {
      const context = `${name}: POST ${r.url}`;
      const answer = await send(bytes);
      const code = expectErrorShape(answer, context);
      // A POST to a GET route may be refused for its method first.
      if (r.method === 'POST') expect(code, context).toBe(expected);
      else expect([expected, 'method_not_allowed'], context).toContain(code);
    }
  }

  const unknown = await send(httpRequest('GET', '/nope/nothing-here'));
  expect(expectErrorShape(unknown, 'unknown path')).toBe('not_found');
  // A long one is not echoed whole (a service serving static files refuses its long segment).
  const long = await send(httpRequest('GET', `/nope/${'y'.repeat(3000)}`));
  expect(['not_found', 'uri_too_long']).toContain(expectErrorShape(long, 'long unknown path'));
  expect(long.body.length).toBeLessThan(600);
}
