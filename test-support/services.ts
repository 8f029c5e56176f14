import { request } from 'node:http';
import { type Browser, chromium } from 'playwright-core';
import { inject } from 'vitest';
import { type BuiltPackage, isBuiltAndCurrent } from './build.ts';
import { launchChromium } from './chromium.ts';
import type { SharedServicesAddress } from './global-setup.ts';
import { type PostgresServer, postgresAt, startPostgres } from './postgres.ts';
import { SERVICE_START_TIMEOUT_MS, WAIT_TIMEOUT_MS } from './timeouts.ts';

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
 * own context (`browser.newContext()`) or page. Its contexts and pages wait for a selector, a
 * navigation or an action up to the suite's wait bound (WAIT_TIMEOUT_MS), not playwright's
 * 30 s: a loaded machine renders slowly, never wrongly.
 */
export async function testBrowser(): Promise<Browser> {
  const address = sharedServices();
  const browser =
    address === undefined
      ? await launchChromium()
      : await chromium.connect((await ask(address, '/chromium')).wsEndpoint as string, {
          timeout: SERVICE_START_TIMEOUT_MS,
        });
  return withWaitBound(browser);
}

/** Every context (and so every page) of `browser` gets the suite's wait bound as its default timeout. */
function withWaitBound(browser: Browser): Browser {
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (...args: Parameters<Browser['newContext']>) => {
    const context = await newContext(...args);
    context.setDefaultTimeout(WAIT_TIMEOUT_MS);
    context.setDefaultNavigationTimeout(WAIT_TIMEOUT_MS);
    return context;
  };
  const newPage = browser.newPage.bind(browser);
  browser.newPage = async (...args: Parameters<Browser['newPage']>) => {
    const page = await newPage(...args);
    page.context().setDefaultTimeout(WAIT_TIMEOUT_MS);
    page.context().setDefaultNavigationTimeout(WAIT_TIMEOUT_MS);
    return page;
  };
  return browser;
}

/**
 * How a test starts a process of package `name` (the validator's bin): `'built'` (from its
 * build, `dist/`) while that is current, else `'source'` (from its sources through tsx). Under
 * `npm test` the run first builds a missing or stale build, once (test-support/build.ts).
 * Outside a vitest run (a bench), nothing is built.
 */
export async function builtEntry(name: BuiltPackage): Promise<'built' | 'source'> {
  const address = sharedServices();
  if (address !== undefined) await ask(address, '/build');
  // Checked here, at each call: an edit after the run's build is never run stale.
  return isBuiltAndCurrent(name) ? 'built' : 'source';
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
