/**
 * The control API's page in a real browser (Debian's Chromium, driven by playwright-core): it
 * shows the miner's devices, rates and results from the API, refuses a change without the
 * token (the API's message on the page), applies one with it, and pauses the miner. Its strict
 * content security policy lets its own script run. A screenshot is written to
 * $TMPDIR/tensormine-miner-page.png for a look.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { testBrowser } from '../../../test-support/services.ts';
import { WAIT_TIMEOUT_MS } from '../../../test-support/timeouts.ts';
import { minerControlTarget } from '../src/control/target.js';
import { startControlApi } from '../src/control-api.js';
import { MiningEngine } from '../src/engine.js';
import { Miner } from '../src/miner.js';
import { cleanup, FakeSource, fakeDate, passHashrateWindow, waitFor } from './helpers.js';

const TOKEN = 'a-control-token-of-some-length';

let browser: Browser;

beforeAll(async () => {
  browser = await testBrowser();
});

afterAll(async () => {
  await browser?.close();
});

describe('the control page in Chromium', () => {
  test('shows devices, rates and results; changes need the token', async () => {
    fakeDate(); // the 10 s window below, on a clock the test moves
    const source = new FakeSource();
    // A result every few thousand nonces: dozens a second. (At 16, a result every few dozen
    // nonces, the miner's thread spent the test taking in thousands a second.)
    source.difficulty = 4096n;
    const engine = new MiningEngine({ threads: 1, kernel: 'js' });
    const miner = new Miner({ source, backends: [engine] });
    cleanup(() => miner.stop());
    await miner.start();
    await waitFor(() => source.submitted.length > 0, 'an accepted result');
    const api = await startControlApi({
      target: minerControlTarget(miner, engine),
      token: TOKEN,
      version: '9.8.7',
    });
    cleanup(() => api.close());

    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    cleanup(() => page.close());
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    // Every answer above 399 (the refused change is one).
    const failed: string[] = [];
    page.on('response', (res) => {
      if (res.status() >= 400)
        failed.push(`${res.request().method()} ${new URL(res.url()).pathname} ${res.status()}`);
    });
    await page.goto(`${api.url}/`);
    const text = async (id: string) => (await page.locator(`#${id}`).textContent()) ?? '';

    /** Waits until the element's text matches (the suite's wait bound). */
    const until = (id: string, pattern: RegExp, timeout = WAIT_TIMEOUT_MS) =>
      page.locator(`#${id}`).filter({ hasText: pattern }).waitFor({ timeout });

    await until('state', /^mining$/);
    expect(await text('version')).toBe('v9.8.7');
    expect(await text('validator')).toBe('fake://source');
    await until('accepted', /\d/);
    expect(Number((await text('accepted')).replace(/\D/g, ''))).toBeGreaterThan(0);
    // The 10 s window once the miner has mined for 10 s (n/a before): one sample, then the
    // clock 10 s on, and the next sample closes the window.
    await passHashrateWindow(engine);
    await until('rate-10s', /H\/s$/);
    const row = page.locator('#devices tr').first();
    expect(await row.locator('td').first().textContent()).toBe('cpu');
    expect(await row.locator('td').nth(1).textContent()).toBe('ok');
    expect(await text('config')).toContain('1 thread, intensity 1, kernel js');

    // Without the token: the API's refusal, on the page; nothing changed.
    await page.fill('#intensity', '0.5');
    await page.click('button[type=submit]');
    await until('message', /token/i);
    expect(engine.intensity).toBe(1);

    // With it: applied, and the settings read again.
    await page.fill('#token', TOKEN);
    await page.fill('#intensity', '0.5');
    await page.click('button[type=submit]');
    await until('message', /^applied: intensity/);
    expect(engine.intensity).toBe(0.5);
    await until('config', /intensity 0\.5/);

    await page.click('#pause');
    await until('state', /^paused$/);
    expect(miner.paused).toBe(true);
    expect(await text('pause')).toBe('Resume');

    await page.screenshot({ path: join(tmpdir(), 'tensormine-miner-page.png'), fullPage: true });
    expect(errors).toEqual([]);
    expect(failed).toEqual(['POST /api/config 401']);
  });
});
