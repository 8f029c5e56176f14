import type { Game } from '@tensormine/protocol';

/** sitemap.xml and robots.txt of the hub, built from the game list and the public URL. */

function xmlEscape(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

/**
 * The sitemap (sitemaps.org 0.9): the index page and one page per game on the hub
 * (`/games/<id>`). A sitemap lists URLs of its own host only, so the games' own URLs, often
 * on other hosts, are linked from those pages rather than listed here.
 */
export function buildSitemap(publicUrl: string, games: readonly Game[], modifiedMs: number): string {
  const lastmod = new Date(modifiedMs).toISOString().slice(0, 10);
  const url = (loc: string, priority: string) =>
    `  <url>\n    <loc>${xmlEscape(loc)}</loc>\n    <lastmod>${lastmod}</lastmod>\n    <changefreq>daily</changefreq>\n    <priority>${priority}</priority>\n  </url>`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">',
    url(`${publicUrl}/`, '1.0'),
    ...games.map((g) => url(`${publicUrl}/games/${encodeURIComponent(g.id)}`, '0.8')),
    '</urlset>',
    '',
  ].join('\n');
}

/** robots.txt: pages may be crawled, the JSON API may not; points at the sitemap. */
export function buildRobots(publicUrl: string): string {
  return ['User-agent: *', 'Allow: /', 'Disallow: /api/', '', `Sitemap: ${publicUrl}/sitemap.xml`, ''].join(
    '\n',
  );
}

export function htmlEscape(value: string): string {
  return xmlEscape(value);
}
