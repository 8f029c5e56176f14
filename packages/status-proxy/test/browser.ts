import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium driven by playwright-core (never a downloaded browser build). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), '..', 'test-artifacts');

export async function launchChromium(): Promise<Browser> {
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
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

/** What the dashboard page exposes to tests and the console (public/dashboard.js). */
export interface Dashboard {
  cells(): number;
  histogram(): { depth: number; count: number }[];
  frontier(): number;
  hasCell(q: number, r: number): boolean;
  pointOf(q: number, r: number): { x: number; y: number };
  metrics(): {
    snapshotMs: number | null;
    firstRenderMs: number | null;
    renderMs: number[];
    frameMs: number[];
  };
  zoom(factor: number): void;
  settle(): void;
}
declare global {
  interface Window {
    tensormineDashboard: Dashboard;
    /** public/panels.js: the rate and block time over the time mined. */
    tensormineMinedRate(
      blocks: readonly { timestamp: number; difficulty: number }[],
    ): { hashesPerSecond: number | undefined; blockSeconds: number; idleGaps: number } | undefined;
  }
}
