import Type, { type Static } from 'typebox';
import { nullable, UnixSecondsSchema, UrlSchema, withDescription } from './common.js';

/** Hub schemas ({hub_url}): the game directory and its ads. */

export const GameIdSchema = Type.String({
  pattern: '^[a-z0-9][a-z0-9-]{0,63}$',
  minLength: 1,
  maxLength: 64,
  description:
    'A game identifier: lowercase letters, digits and hyphens (a URL slug), at most 64 characters.',
});
export type GameId = Static<typeof GameIdSchema>;

const AssetUrl = (description: string) =>
  Type.String({ pattern: '^(https?://|/)[^\\s]*$', maxLength: 2048, description });

export const GameSchema = Type.Object(
  {
    id: GameIdSchema,
    name: Type.String({ minLength: 1, maxLength: 128, description: 'Display name.' }),
    url: withDescription(UrlSchema, 'Where the game is played; GET /api/status/:gameId checks it.'),
    icon: AssetUrl('Icon image: an absolute URL or a path on the hub.'),
    category: Type.String({
      pattern: '^[a-z0-9-]{1,32}$',
      maxLength: 32,
      description: 'Category slug, e.g. "puzzle", "arcade", "mining".',
    }),
  },
  { title: 'Game', description: 'A game of the directory.' },
);
export type Game = Static<typeof GameSchema>;

export const GamesResponseSchema = Type.Object(
  { games: Type.Array(GameSchema, { maxItems: 1000, description: 'The full game list.' }) },
  { title: 'GamesResponse', description: 'GET /api/games.' },
);
export type GamesResponse = Static<typeof GamesResponseSchema>;

export const GameIdParamsSchema = Type.Object(
  { gameId: GameIdSchema },
  { title: 'GameIdParams', description: 'Path parameters of /api/status/:gameId.' },
);
export type GameIdParams = Static<typeof GameIdParamsSchema>;

export const GameStatusSchema = Type.Object(
  {
    id: GameIdSchema,
    status: Type.Enum(['online', 'offline'], {
      type: 'string',
      description:
        'online when a HEAD request to the game URL answered with a 2xx or 3xx status in time; else offline.',
    }),
    checked_at: withDescription(UnixSecondsSchema, 'When the check ran (results may be cached briefly).'),
    http_status: nullable(
      Type.Integer({ minimum: 100, maximum: 599 }),
      'The HTTP status the HEAD request got; null when it got none (timeout, DNS or connection error).',
    ),
  },
  { title: 'GameStatus', description: 'GET /api/status/:gameId.' },
);
export type GameStatus = Static<typeof GameStatusSchema>;

export const AdSchema = Type.Object(
  {
    id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', maxLength: 64, description: 'The ad identifier.' }),
    type: Type.Enum(['image', 'iframe', 'popup'], {
      type: 'string',
      description:
        'image (a picture linking to click_url), iframe (image_url loaded in a frame), popup (an overlay).',
    }),
    position: Type.String({
      pattern: '^[a-z-]{1,32}$',
      maxLength: 32,
      description: 'Where the ad is placed, e.g. "sidebar", "bottom", "inline".',
    }),
    delay: Type.Integer({ minimum: 0, maximum: 3600, description: 'Seconds to wait before showing the ad.' }),
    image_url: AssetUrl('The image (image, popup) or the framed page (iframe).'),
    click_url: withDescription(UrlSchema, 'Where a click on the ad goes.'),
  },
  {
    title: 'Ad',
    description: 'An ad of the hub ads list (GET /api/ads).',
  },
);
export type Ad = Static<typeof AdSchema>;

export const AdsListSchema = Type.Object(
  { ads: Type.Array(AdSchema, { maxItems: 100, description: 'The ads list.' }) },
  { title: 'AdsList', description: 'GET /api/ads: the ads list of the hub.' },
);
export type AdsList = Static<typeof AdsListSchema>;
