import { describe, expect, it } from 'vitest';
import {
  AbortedError,
  InvalidInputError,
  KeyFileError,
  NetworkError,
  ProtocolMismatchError,
  TensormineError,
  TimeoutError,
  UnexpectedResponseError,
  ValidatorError,
} from '../src/errors.js';

const request = {
  operationId: 'getHealth',
  method: 'GET',
  url: 'http://v.test/health',
  endpoint: 'http://v.test',
};

describe('error classes', () => {
  it('have literal names, stable codes and docs pointers', () => {
    const errors = [
      new ValidatorError(
        { statusCode: 409, code: 'proof_replayed', error: 'Conflict', message: 'again' },
        request,
      ),
      new UnexpectedResponseError('odd', request, { status: 502 }),
      new NetworkError(request, new Error('refused'), false),
      new TimeoutError(request, 50),
      new AbortedError(request, new Error('stop')),
      new InvalidInputError([{ path: 'body.amount', message: 'body.amount: expected a string, got 1' }], {
        operationId: 'stake',
      }),
      new ProtocolMismatchError('wrong generation'),
      new KeyFileError('key_file_invalid', '/k', 'bad file'),
    ];
    expect(errors.map((e) => [e.name, e.code, e.docsPath])).toEqual([
      ['ValidatorError', 'proof_replayed', 'docs/errors.md#proof_replayed'],
      ['UnexpectedResponseError', 'unexpected_response', 'docs/sdk.md#unexpectedresponseerror'],
      ['NetworkError', 'network_error', 'docs/sdk.md#networkerror'],
      ['TimeoutError', 'timeout', 'docs/sdk.md#timeouterror'],
      ['AbortedError', 'aborted', 'docs/sdk.md#abortederror'],
      ['InvalidInputError', 'invalid_input', 'docs/sdk.md#invalidinputerror'],
      ['ProtocolMismatchError', 'protocol_mismatch', 'docs/sdk.md#protocolmismatcherror'],
      ['KeyFileError', 'key_file_invalid', 'docs/sdk.md#key-files'],
    ]);
    for (const e of errors) {
      expect(e).toBeInstanceOf(TensormineError);
      expect(e).toBeInstanceOf(Error);
    }
  });

  it('put the request and the docs under the short message', () => {
    const e = new TimeoutError(request, 50);
    expect(e.message).toBe(
      'no answer from http://v.test within 50 ms\n\nRequest: GET http://v.test/health\nDocs: docs/sdk.md#timeouterror',
    );
    expect(new ProtocolMismatchError('wrong generation').message).toBe(
      'wrong generation\n\nDocs: docs/sdk.md#protocolmismatcherror',
    );
  });

  it('keep the cause chain, and walk it', () => {
    const root = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const network = new NetworkError(request, root, false);
    const outer = new ProtocolMismatchError('no hexchain', request, { cause: network });
    expect(outer.cause).toBe(network);
    expect(network.cause).toBe(root);
    expect(outer.walk((e) => e instanceof NetworkError)).toBe(network);
    expect(outer.walk((e) => (e as { code?: string }).code === 'ECONNREFUSED')).toBe(root);
    expect(outer.walk(() => false)).toBeUndefined();
  });

  it('do not answer instanceof for a sibling class', () => {
    const e = new TimeoutError(request, 1);
    expect(e).not.toBeInstanceOf(NetworkError);
    expect(e).not.toBeInstanceOf(ValidatorError);
    expect({}).not.toBeInstanceOf(TensormineError);
    expect((null as unknown) instanceof TensormineError).toBe(false);
  });

  it('answer instanceof across two copies of the package (Symbol.for brands)', async () => {
    // A second instance of the module, as when two versions of the package are installed.
    const specifier = '../src/errors.ts?second-copy';
    const copy = (await import(/* @vite-ignore */ specifier)) as typeof import('../src/errors.js');
    expect(copy.ValidatorError).not.toBe(ValidatorError);
    const fromCopy = new copy.ValidatorError(
      { statusCode: 404, code: 'challenge_not_found', error: 'Not Found', message: 'no' },
      request,
    );
    expect(fromCopy).toBeInstanceOf(ValidatorError);
    expect(fromCopy).toBeInstanceOf(TensormineError);
    expect(fromCopy).not.toBeInstanceOf(NetworkError);
    expect(new NetworkError(request, null, true)).toBeInstanceOf(copy.NetworkError);
    expect(new NetworkError(request, null, true)).toBeInstanceOf(copy.TensormineError);
  });

  it('take the retry delay of a 429 from its details', () => {
    const e = new ValidatorError(
      {
        statusCode: 429,
        code: 'rate_limited',
        error: 'Too Many Requests',
        message: 'slow',
        details: { retry_after_s: 2 },
      },
      request,
    );
    expect(e.retryAfterMs).toBe(2_000);
  });
});
