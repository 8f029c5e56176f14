/**
 * The status proxy answers what it refuses itself in the one documented error shape, as the
 * validator does (malformed raw JSON, a body that is not JSON, an oversize body, an unknown
 * method, broken paths, huge headers), over a real socket. No validator is needed: nothing here
 * is forwarded.
 */
import { routesOf } from '@tensormine/protocol';
import { afterAll, beforeAll, test } from 'vitest';
import { expectMalformedRequestsRefused } from '../../../test-support/raw-http.ts';
import { createStatusProxy, type StatusProxy } from '../src/index.js';

let proxy: StatusProxy;
let port: number;

beforeAll(async () => {
  proxy = await createStatusProxy({ validators: ['http://127.0.0.1:9'], logger: false });
  port = Number(new URL(await proxy.listen({ host: '127.0.0.1', port: 0 })).port);
});
afterAll(() => proxy.close());

test('every malformed request is answered in the documented error shape', async () => {
  await expectMalformedRequestsRefused(port, routesOf('status'), 64 * 1024);
});
