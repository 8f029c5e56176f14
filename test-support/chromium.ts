import { type Browser, chromium } from 'playwright-core';

/**
 * Debian's Chromium, driven by playwright-core, for the tests of the web pages (hub index,
 * terminal OAuth flow). `.ci/run` installs the `chromium` package. The flags are the team's;
 * playwright gives every launch a fresh temporary profile (it refuses --user-data-dir in
 * `launch`), which is what the fresh --user-data-dir rule asks for.
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
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
  });
}
