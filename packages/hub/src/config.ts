import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  intSetting as int,
  type LogLevel,
  type MetricsSettings,
  type ResolvedSettings,
  type ResolveSettingsInput,
  resolveSettings,
  type SettingSpecs,
  serviceBaseSettings,
  textSetting as text,
  urlSetting,
} from '@tensormine/service-kit';

/**
 * Hub configuration: every setting is a flag (kebab-case), an environment variable (HUB_*) and a
 * key of the JSON config file; precedence flags > environment > config file > defaults (the one
 * resolver of the services, from @tensormine/service-kit).
 */
export interface HubConfig extends MetricsSettings {
  readonly host: string;
  readonly port: number;
  /** The games file: JSON `{"games": [Game, ...]}` (or a bare array). */
  readonly gamesFile: string;
  /** The ads file: JSON `{"ads": [Ad, ...]}` (or a bare array); unset serves an empty list. */
  readonly adsFile: string | undefined;
  /** The directory of static files (the index page and its assets by default). */
  readonly staticDir: string;
  /**
   * The public base URL of the hub (absolute), used in sitemap.xml and robots.txt; unset: the
   * address the hub listens on.
   */
  readonly publicUrl: string | undefined;
  /** Time a HEAD probe may take before the game counts as offline. */
  readonly statusTimeoutMs: number;
  /** How long a probe result is reused. */
  readonly statusCacheMs: number;
  /** Probes in flight at most, over all games. */
  readonly statusConcurrency: number;
  /** Per client address: sustained requests per second and burst. */
  readonly rateLimitPerSecond: number;
  readonly rateLimitBurst: number;
  readonly logLevel: LogLevel;
}

export type HubSettingName = keyof HubConfig;

/** The static front end shipped with the package (index page, styles, script). */
export const BUILTIN_STATIC_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'public');

export const HUB_SETTINGS: SettingSpecs<HubConfig> = {
  // 8450: the status proxy has 8430 and the terminal 8440, so the documented commands run side by side.
  ...serviceBaseSettings('HUB', { port: 8450, perSecond: 50, burst: 200 }),
  gamesFile: {
    env: 'HUB_GAMES_FILE',
    description: 'the games file (JSON: {"games": [...]})',
    default: () => join(BUILTIN_STATIC_DIR, '..', 'examples', 'games.json'),
    parse: text,
  },
  adsFile: {
    env: 'HUB_ADS_FILE',
    description: 'the ads file (JSON: {"ads": [...]}); unset: no ads',
    default: () => undefined,
    parse: text,
  },
  staticDir: {
    env: 'HUB_STATIC_DIR',
    description: 'directory of static files served at /',
    default: () => BUILTIN_STATIC_DIR,
    parse: text,
  },
  publicUrl: {
    env: 'HUB_PUBLIC_URL',
    description:
      'public base URL of the hub, for sitemap.xml and robots.txt; unset: the address it listens on',
    default: () => undefined,
    parse: urlSetting,
  },
  statusTimeoutMs: {
    env: 'HUB_STATUS_TIMEOUT_MS',
    description: 'time a HEAD probe may take before the game counts as offline',
    default: () => 3000,
    parse: int(100, 60_000),
  },
  statusCacheMs: {
    env: 'HUB_STATUS_CACHE_MS',
    description: 'how long a probe result is reused',
    default: () => 30_000,
    parse: int(0, 3_600_000),
  },
  statusConcurrency: {
    env: 'HUB_STATUS_CONCURRENCY',
    description: 'probes in flight at most, over all games',
    default: () => 8,
    parse: int(1, 256),
  },
};

export const HUB_SETTING_NAMES = Object.keys(HUB_SETTINGS) as HubSettingName[];

export function resolveHubConfig(input: ResolveSettingsInput<HubConfig> = {}): ResolvedSettings<HubConfig> {
  return resolveSettings(HUB_SETTINGS, input);
}
