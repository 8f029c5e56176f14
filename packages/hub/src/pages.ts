import type { Game } from '@tensormine/protocol';
import { htmlEscape } from './site.js';

/**
 * A game's page on the hub (`/games/<id>`, listed in the sitemap): server-rendered so that
 * crawlers see the name and the link; the badge is filled in by /hub.js from /api/status.
 */
export function gamePage(game: Game): string {
  const name = htmlEscape(game.name);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${name} — tensormine hub</title>
<link rel="stylesheet" href="/hub.css">
</head>
<body>
<header class="top"><a href="/" class="brand">tensormine hub</a></header>
<main class="game-page" data-game-id="${htmlEscape(game.id)}">
  <img class="icon" src="${htmlEscape(game.icon)}" alt="" width="96" height="96">
  <h1>${name}</h1>
  <p class="category">${htmlEscape(game.category)}</p>
  <p><span class="badge checking" data-status-for="${htmlEscape(game.id)}">checking…</span></p>
  <p><a class="play" href="${htmlEscape(game.url)}" rel="noopener">Play ${name}</a></p>
</main>
<script src="/hub.js" defer></script>
</body>
</html>
`;
}
