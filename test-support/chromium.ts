import { type Browser, type BrowserServer, chromium, type LaunchOptions } from 'playwright-core';

/**
 * Debian's Chromium, driven by playwright-core, for the tests of the web pages (hub index,
 * terminal OAuth flow, status dashboard, the miner's WASM kernel). `.ci/run` installs the
 * `chromium` package. The flags are the team's; playwright gives every launch a fresh temporary
 * profile (it refuses --user-data-dir in `launch`), which is what the fresh --user-data-dir
 * rule asks for.
 *
 * A test takes the test run's one browser with `testBrowser()` (test-support/services.ts) and
 * opens its own context in it; `launchChromium` starts a browser of its own (the benches).
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const OPTIONS: LaunchOptions = {
  executablePath: CHROMIUM_PATH,
  headless: true,
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
};

/** A browser of this process's own (closed by `browser.close()`). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch(OPTIONS);
}

/** A browser other processes connect to (`chromium.connect(server.wsEndpoint())`): the test run's. */
export function launchChromiumServer(): Promise<BrowserServer> {
  return chromium.launchServer(OPTIONS);
}
