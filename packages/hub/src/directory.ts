import { statSync } from 'node:fs';
import { type Ad, AdSchema, type Game, GameSchema } from '@tensormine/protocol';
import { ConfigError, readJsonFile } from '@tensormine/service-kit';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';

/**
 * The hub's directory: the games and the ads, read from their JSON files once at start and
 * checked against the protocol's schemas, so a bad entry stops the hub with a message naming
 * the file, the entry and the field instead of being served.
 */
export interface Directory {
  readonly games: readonly Game[];
  readonly ads: readonly Ad[];
  /** When the games file last changed (the sitemap's lastmod), Unix milliseconds. */
  readonly gamesModifiedMs: number;
  game(id: string): Game | undefined;
}

const MAX_GAMES = 1000;
const MAX_ADS = 100;

function entries<T>(path: string, key: string, schema: TSchema, max: number): T[] {
  const parsed = readJsonFile(path, key === 'games' ? 'games file' : 'ads file');
  const list = Array.isArray(parsed)
    ? parsed
    : typeof parsed === 'object' && parsed !== null && Array.isArray((parsed as Record<string, unknown>)[key])
      ? ((parsed as Record<string, unknown>)[key] as unknown[])
      : undefined;
  if (!list) throw new ConfigError(`${path}: expected {"${key}": [...]} or a JSON array`);
  if (list.length > max) throw new ConfigError(`${path}: ${list.length} ${key}, at most ${max}`);
  const check = Compile(schema);
  const seen = new Set<string>();
  list.forEach((item, i) => {
    if (!check.Check(item)) {
      const first = [...check.Errors(item)][0];
      const where = first?.instancePath || '';
      throw new ConfigError(
        `${path}: ${key}[${i}]${where}: ${first?.message ?? 'does not match the schema'}`,
      );
    }
    const id = (item as { id: string }).id;
    if (seen.has(id)) throw new ConfigError(`${path}: ${key}[${i}]: duplicate id ${JSON.stringify(id)}`);
    seen.add(id);
  });
  return list as T[];
}

export function loadDirectory(gamesFile: string, adsFile: string | undefined): Directory {
  const games = entries<Game>(gamesFile, 'games', GameSchema, MAX_GAMES);
  for (const game of games) {
    const protocol = new URL(game.url).protocol;
    if (protocol !== 'http:' && protocol !== 'https:') {
      throw new ConfigError(`${gamesFile}: game ${game.id}: url must be http or https`);
    }
  }
  const ads = adsFile ? entries<Ad>(adsFile, 'ads', AdSchema, MAX_ADS) : [];
  const byId = new Map(games.map((g) => [g.id, g]));
  return {
    games,
    ads,
    gamesModifiedMs: statSync(gamesFile).mtimeMs,
    game: (id) => byId.get(id),
  };
}
