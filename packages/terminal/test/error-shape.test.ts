/**
 * The terminal backend answers what it refuses in the one documented error shape, as the
 * validator does: malformed raw JSON, a body that is not JSON, an oversize body, an unknown
 * method, broken paths and huge headers, over a real socket (Node's HTTP parser is part of what
 * is tested). No validator is needed: nothing here reaches the ledger.
 */
import { routesOf } from '@tensormine/protocol';
import { afterAll, beforeAll, test } from 'vitest';
import { expectMalformedRequestsRefused } from '../../../test-support/raw-http.ts';
import { createTerminal, type Terminal } from '../src/index.js';

let terminal: Terminal;
let port: number;

beforeAll(async () => {
  terminal = await createTerminal({ dataDir: ':memory:', validatorUrl: 'http://127.0.0.1:9', logger: false });
  port = Number(new URL(await terminal.listen({ host: '127.0.0.1', port: 0 })).port);
});
afterAll(() => terminal.close());

test('every malformed request is answered in the documented error shape', async () => {
  await expectMalformedRequestsRefused(port, routesOf('terminal'), 16 * 1024);
});
