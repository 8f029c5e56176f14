import { request } from 'node:http';
import { type Browser, chromium } from 'playwright-core';
import { inject } from 'vitest';
import { launchChromium } from './chromium.ts';
import type { SharedServicesAddress } from './global-setup.ts';
import { type PostgresServer, postgresAt, startPostgres } from './postgres.ts';
import { SERVICE_START_TIMEOUT_MS } from './timeouts.ts';

/**
 * What a test file asks the test run for, instead of starting it itself (see
 * test-support/global-setup.ts): the run's PostgreSQL server and its browser.
 *
 * Under `npm test` (or any vitest run of these configs) they are the run's shared ones, started
 * on first use. Where no global set-up gave their address (a config without it), the file gets a
 * server or a browser of its own, which `stop()` / `close()` then end: a test calls `stop()` /
 * `close()` in its `afterAll` either way.
 */

/**
 * A PostgreSQL server to create this file's databases on (`createDatabase()`, optionally from a
 * template database the file made). Its `stop()` ends only a server of the file's own.
 */
export async function testPostgres(): Promise<PostgresServer> {
  const address = sharedServices();
  if (address === undefined) return startPostgres();
  const { url } = await ask(address, '/postgres');
  return postgresAt(url as string);
}

/**
 * The run's Chromium (a connection to it: `close()` disconnects), in which the test opens its
 * own context (`browser.newContext()`) or page.
 */
export async function testBrowser(): Promise<Browser> {
  const address = sharedServices();
  if (address === undefined) return launchChromium();
  const { wsEndpoint } = await ask(address, '/chromium');
  return chromium.connect(wsEndpoint as string, { timeout: SERVICE_START_TIMEOUT_MS });
}

function sharedServices(): SharedServicesAddress | undefined {
  try {
    return inject('tensormine.services');
  } catch {
    return undefined; // not in a vitest worker
  }
}

/** POSTs to the run's service endpoint (plain node:http: no test's fetch mock sees it). */
function ask(address: SharedServicesAddress, path: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, address.url),
      { method: 'POST', headers: { authorization: `Bearer ${address.token}` } },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          let body: Record<string, unknown>;
          try {
            body = JSON.parse(text) as Record<string, unknown>;
          } catch {
            return reject(
              new Error(`the test run's ${path} service answered ${response.statusCode}: ${text}`),
            );
          }
          if (response.statusCode === 200) resolve(body);
          else reject(new Error(`the test run's ${path} service: ${String(body.error ?? text)}`));
        });
      },
    );
    req.on('error', (error) =>
      reject(new Error(`the test run's ${path} service is unreachable: ${error.message}`)),
    );
    req.end();
  });
}
