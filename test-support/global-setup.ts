import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { BrowserServer } from 'playwright-core';
import type { TestProject } from 'vitest/node';
import { ensureBuilt } from './build.ts';
import { launchChromiumServer } from './chromium.ts';
import { type PostgresServer, startPostgres } from './postgres.ts';
import { SERVICE_START_TIMEOUT_MS } from './timeouts.ts';
import { trace, traced } from './trace.ts';

/**
 * The test run's shared services, in the vitest process (every project's `globalSetup`, see
 * vitest.shared.ts): one PostgreSQL server and one Chromium per run, each started the first time
 * a test file asks for it (a run that needs neither starts neither) and stopped when the run
 * ends; the workspace's build, made once if it is missing or stale (test-support/build.ts); and
 * one Node compile cache for the run's processes. Test files reach them through
 * test-support/services.ts: the set-up gives every project the address of a small HTTP endpoint
 * on 127.0.0.1 (and a random token for it) with vitest's `provide`, and the workers ask it for
 * the server's URL, the browser's WebSocket endpoint or the build.
 *
 * The vitest process loads this module once per project that runs; the services live on
 * `globalThis`, counted by the projects using them, so there is one of each per run.
 */
export interface SharedServicesAddress {
  readonly url: string;
  readonly token: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    'tensormine.services': SharedServicesAddress;
  }
}

interface Services {
  readonly address: SharedServicesAddress;
  users: number;
  readonly close: () => Promise<void>;
}

const KEY = Symbol.for('tensormine.test-services');
const COMPILE_CACHE = join(
  import.meta.dirname,
  '..',
  'node_modules',
  '.cache',
  'tensormine-test-compile-cache',
);
type Holder = { [KEY]?: Promise<Services> };

export async function setup(project: TestProject): Promise<() => Promise<void>> {
  trace(`set-up ${project.name}`);
  const holder = globalThis as Holder;
  holder[KEY] ??= startServices();
  const services = await holder[KEY];
  services.users++;
  project.provide('tensormine.services', services.address);
  return async () => {
    if (--services.users > 0) return;
    delete holder[KEY];
    await services.close();
  };
}

async function startServices(): Promise<Services> {
  const token = randomBytes(24).toString('hex');
  let postgres: Promise<PostgresServer> | undefined;
  let chromium: Promise<BrowserServer> | undefined;
  // Node's compile cache for every process of the run started after this (the test workers,
  // the programs the tests start with the run's environment): the first to load a JavaScript
  // file compiles it, the others load V8's code for it (about a fifth less CPU for a test
  // worker's start). In node_modules/.cache (not removed when the run ends: test workers write
  // their part as they exit, after the global teardown; Node keys it by the file's content and
  // its own version, so it is never stale); a cache the user set (NODE_COMPILE_CACHE) is kept.
  const compileCache = process.env.NODE_COMPILE_CACHE === undefined ? COMPILE_CACHE : undefined;
  if (compileCache !== undefined) process.env.NODE_COMPILE_CACHE = compileCache;

  const handlers: Record<string, () => Promise<Record<string, string>>> = {
    '/postgres': async () => {
      postgres ??= traced('service postgres', () =>
        startPostgres({
          startTimeoutMs: SERVICE_START_TIMEOUT_MS,
          // every test file's validators and storages at once, with their pools
          settings: { max_connections: 400 },
        }),
      );
      return { url: (await postgres).url };
    },
    '/build': async () => {
      return { current: String(await ensureBuilt()) };
    },
    '/chromium': async () => {
      chromium ??= traced('service chromium', launchChromiumServer);
      return { wsEndpoint: (await chromium).wsEndpoint() };
    },
  };

  const server = createServer((request, response) => {
    void answer(request, response, token, handlers);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as { port: number };
  return {
    address: { url: `http://127.0.0.1:${port}`, token },
    users: 0,
    async close() {
      trace('teardown services start');
      await closeServer(server);
      if (compileCache !== undefined && process.env.NODE_COMPILE_CACHE === compileCache)
        delete process.env.NODE_COMPILE_CACHE;
      const results = await Promise.allSettled([
        // (one that never started was already reported to the tests that asked for it)
        postgres?.then(
          (pg) => pg.stop(),
          () => {},
        ),
        chromium?.then(
          (browser) => browser.close(),
          () => {},
        ),
      ]);
      trace('teardown services end');
      const failed = results.filter((r) => r.status === 'rejected');
      if (failed.length > 0) {
        throw new AggregateError(
          failed.map((r) => (r as PromiseRejectedResult).reason),
          'the shared test services did not stop cleanly',
        );
      }
    },
  };
}

async function answer(
  request: IncomingMessage,
  response: ServerResponse,
  token: string,
  handlers: Record<string, () => Promise<Record<string, string>>>,
): Promise<void> {
  const send = (status: number, body: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  request.resume();
  const given = Buffer.from(request.headers.authorization ?? '');
  const expected = Buffer.from(`Bearer ${token}`);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return send(401, { error: 'not a test worker of this run' });
  }
  const handler = request.method === 'POST' ? handlers[request.url ?? ''] : undefined;
  if (handler === undefined) return send(404, { error: `no service at ${request.method} ${request.url}` });
  try {
    send(200, await handler());
  } catch (error) {
    send(500, { error: error instanceof Error ? error.message : String(error) });
  }
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
