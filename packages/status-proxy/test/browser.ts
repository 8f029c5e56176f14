import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { CHROMIUM_PATH, launchChromium as launchOwnChromium } from '../../../test-support/chromium.ts';

/** Debian's Chromium driven by playwright-core (never a downloaded browser build). */
export const CHROMIUM = CHROMIUM_PATH;

export const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), '..', 'test-artifacts');

/**
 * A browser of this process's own (the bench), with the artifacts directory made. Tests take
 * the test run's browser instead (test-support/services.ts `testBrowser`).
 */
export async function launchChromium(): Promise<Browser> {
  mkdirSync(ARTIFACTS, { recursive: true });
  return launchOwnChromium();
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
  }
}
