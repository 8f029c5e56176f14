import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPromtoolClean } from '../../../test-support/prometheus.ts';
import { testBrowser } from '../../../test-support/services.ts';
import { PROCESS_START_TIMEOUT_MS, WAIT_TIMEOUT_MS } from '../../../test-support/timeouts.ts';
import { createHub, type Hub, StatusProber } from '../src/index.js';

/**
 * The hub against real game servers on loopback: one answering HEAD (online), one answering
 * 405 to HEAD (offline), one that never answers (hangs past the timeout), one refusing
 * connections. The sitemap is validated with xmllint against the sitemaps.org schema; the
 * index page is loaded in Chromium.
 */

const FIXTURES = join(import.meta.dirname, 'fixtures');
const SCREENSHOTS = join(import.meta.dirname, '..', '..', '..', 'test-results', 'hub');

let online: Server;
let noHead: Server;
let hanging: Server;
let headRequests = 0;
let dir: string;
let hub: Hub;
let base: string;

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    );
  });
}

beforeAll(async () => {
  online = createServer((req, res) => {
    if (req.method === 'HEAD') headRequests++;
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(req.method === 'HEAD' ? undefined : '<p>game</p>');
  });
  noHead = createServer((req, res) => {
    res.writeHead(req.method === 'HEAD' ? 405 : 200).end();
  });
  hanging = createServer(() => {
    /* never answers */
  });
  const [onlineUrl, noHeadUrl, hangingUrl] = await Promise.all([
    listen(online),
    listen(noHead),
    listen(hanging),
  ]);
  const closed = createServer();
  const closedUrl = await listen(closed);
  await new Promise((r) => closed.close(r));

  dir = mkdtempSync(join(tmpdir(), 'tm-hub-'));
  const games = [
    {
      id: 'star-miner',
      name: 'Star Miner',
      url: `${onlineUrl}/play`,
      icon: '/icons/hex.svg',
      category: 'mining',
    },
    {
      id: 'no-head',
      name: 'No Head <b>Game</b>',
      url: noHeadUrl,
      icon: '/icons/tiles.svg',
      category: 'puzzle',
    },
    { id: 'sleepy', name: 'Sleepy', url: hangingUrl, icon: '/icons/tiles.svg', category: 'arcade' },
    { id: 'gone', name: 'Gone & Away', url: closedUrl, icon: '/icons/hex.svg', category: 'arcade' },
  ];
  writeFileSync(join(dir, 'games.json'), JSON.stringify({ games }));
  writeFileSync(
    join(dir, 'ads.json'),
    JSON.stringify({
      ads: [
        {
          id: 'side',
          type: 'image',
          position: 'sidebar',
          delay: 0,
          image_url: '/icons/ad-stake.svg',
          click_url: 'https://example.com/stake',
        },
        {
          id: 'pop',
          type: 'popup',
          position: 'inline',
          delay: 1,
          image_url: '/icons/ad-stake.svg',
          click_url: 'https://example.com/pop',
        },
      ],
    }),
  );
  hub = await createHub({
    gamesFile: join(dir, 'games.json'),
    adsFile: join(dir, 'ads.json'),
    publicUrl: 'https://hub.example.org',
    // generous: a loaded machine must not make the game that answers look offline; only the hanging
    // game waits for it (once: the result is cached)
    statusTimeoutMs: 5_000,
    statusCacheMs: 60_000,
    statusConcurrency: 2,
    port: 0,
  });
  base = await hub.listen({ port: 0 });
});

afterAll(async () => {
  await hub?.close();
  for (const s of [online, noHead, hanging]) {
    s?.closeAllConnections();
    s?.close();
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('hub API', () => {
  it('lists the games of the games file', async () => {
    const res = await fetch(`${base}/api/games`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { games: { id: string }[] };
    expect(body.games.map((g) => g.id)).toEqual(['star-miner', 'no-head', 'sleepy', 'gone']);
  });

  it('reports a game answering HEAD as online, and caches the result', async () => {
    const before = headRequests;
    const res = await fetch(`${base}/api/status/star-miner`);
    expect(res.status).toBe(200);
    const status = (await res.json()) as { id: string; status: string; http_status: number | null };
    expect(status).toMatchObject({ id: 'star-miner', status: 'online', http_status: 200 });
    await fetch(`${base}/api/status/star-miner`);
    await fetch(`${base}/api/status/star-miner`);
    expect(headRequests - before).toBe(1);
  });

  it('reports a game refusing HEAD, one hanging past the timeout and one refusing connections as offline', async () => {
    const [noHeadStatus, sleepy, gone] = await Promise.all(
      ['no-head', 'sleepy', 'gone'].map(async (id) => (await fetch(`${base}/api/status/${id}`)).json()),
    );
    expect(noHeadStatus).toMatchObject({ status: 'offline', http_status: 405 });
    expect(sleepy).toMatchObject({ status: 'offline', http_status: null });
    expect(gone).toMatchObject({ status: 'offline', http_status: null });
  });

  it('shares one probe between concurrent asks for one game (and its metrics say so)', async () => {
    const fresh = await createHub({
      gamesFile: join(dir, 'games.json'),
      statusTimeoutMs: 300,
      statusConcurrency: 1,
      metricsToken: 'hub-metrics-token-000000',
    });
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => fresh.app.inject('/api/status/sleepy').then((r) => r.json())),
    );
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set(['offline']));
    expect(fresh.prober.probesSent).toBe(1);
    const metrics = (
      await fresh.app.inject({
        url: '/metrics',
        headers: { authorization: 'Bearer hub-metrics-token-000000' },
      })
    ).body;
    expect(metrics).toContain('tensormine_hub_status_probe_duration_seconds_count{result="offline"} 1\n');
    expect(metrics).toContain('tensormine_hub_status_cache_hits_total 19\n');
    expect(metrics).toMatch(/^tensormine_hub_games \d+$/m);
    await expectPromtoolClean(metrics);
    await fresh.close();
  });

  it('runs at most statusConcurrency probes at once', async () => {
    let inFlight = 0;
    let most = 0;
    const slow = createServer((_req, res) => {
      inFlight++;
      most = Math.max(most, inFlight);
      setTimeout(() => {
        inFlight--;
        res.writeHead(200).end();
      }, 100);
    });
    const url = await listen(slow);
    const prober = new StatusProber({ timeoutMs: 30_000, cacheMs: 0, concurrency: 2 });
    const games = Array.from({ length: 7 }, (_, i) => ({
      id: `g${i}`,
      name: `G${i}`,
      url: `${url}/g${i}`,
      icon: '/i.svg',
      category: 'arcade',
    }));
    const results = await Promise.all(games.map((g) => prober.status(g)));
    expect(results.every((r) => r.status === 'online')).toBe(true);
    expect(most).toBe(2);
    expect(prober.probesSent).toBe(7);
    slow.close();
  });

  it('probes only configured games: an unknown id or a URL is refused without any request', async () => {
    const unknown = await fetch(`${base}/api/status/not-a-game`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: 'game_not_found' });
    const url = await fetch(`${base}/api/status/${encodeURIComponent('http://169.254.169.254/')}`);
    expect(url.status).toBe(400);
    expect(await url.json()).toMatchObject({ code: 'validation_failed' });
  });

  it('serves health, robots.txt and the ads list', async () => {
    const health = (await (await fetch(`${base}/health`)).json()) as Record<string, unknown>;
    expect(health).toMatchObject({ status: 'ok', service: 'tensormine-hub' });
    const robots = await fetch(`${base}/robots.txt`);
    expect(robots.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await robots.text();
    expect(text).toContain('Disallow: /api/');
    expect(text).toContain('Sitemap: https://hub.example.org/sitemap.xml');
    const ads = (await (await fetch(`${base}/api/ads`)).json()) as { ads: { id: string; type: string }[] };
    expect(ads.ads.map((a) => [a.id, a.type])).toEqual([
      ['side', 'image'],
      ['pop', 'popup'],
    ]);
  });

  it('serves a sitemap valid against the sitemaps.org schema, one page per game', async () => {
    const res = await fetch(`${base}/sitemap.xml`);
    expect(res.headers.get('content-type')).toMatch(/^application\/xml/);
    const xml = await res.text();
    const file = join(dir, 'sitemap.xml');
    writeFileSync(file, xml);
    // xmllint exits non-zero (and the test fails) when the document does not validate.
    const out = execFileSync('xmllint', ['--noout', '--schema', join(FIXTURES, 'sitemap.xsd'), file], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    expect(out).toBe('');
    expect(xml).toContain('<loc>https://hub.example.org/</loc>');
    expect(xml).toContain('<loc>https://hub.example.org/games/star-miner</loc>');
    expect(xml.match(/<url>/g)).toHaveLength(5);
  });

  it('advertises the address it listens on when no public URL is set', async () => {
    const own = await createHub({ gamesFile: join(dir, 'games.json'), port: 0 });
    try {
      expect(own.config.publicUrl).toBeUndefined();
      const url = await own.listen({ port: 0 });
      expect(url).not.toContain(':8450');
      expect(own.publicUrl()).toBe(url);
      const robots = await (await fetch(`${url}/robots.txt`)).text();
      expect(robots).toContain(`Sitemap: ${url}/sitemap.xml`);
      const sitemap = await (await fetch(`${url}/sitemap.xml`)).text();
      expect(sitemap).toContain(`<loc>${url}/</loc>`);
      expect(sitemap).toContain(`<loc>${url}/games/star-miner</loc>`);
    } finally {
      await own.close();
    }
  });

  it("defaults to a port of its own, not the status proxy's 8430 nor the terminal's 8440", async () => {
    const own = await createHub({ gamesFile: join(dir, 'games.json') });
    try {
      expect(own.config.port).toBe(8450);
      expect(own.publicUrl()).toBe('http://127.0.0.1:8450');
    } finally {
      await own.close();
    }
  });

  it('names the port when it is already in use', async () => {
    const busy = createServer();
    const url = await listen(busy);
    const port = new URL(url).port;
    try {
      const run = spawnSync(
        join(import.meta.dirname, '..', '..', '..', 'node_modules', '.bin', 'tsx'),
        [
          '--conditions=@tensormine/source',
          join(import.meta.dirname, '..', 'src', 'bin.ts'),
          'start',
          '--port',
          port,
        ],
        {
          encoding: 'utf8',
          env: { ...process.env, HUB_LOG_LEVEL: 'silent' },
          timeout: PROCESS_START_TIMEOUT_MS,
        },
      );
      expect(run.status).toBe(1);
      expect(run.stderr.trim()).toBe(
        `tensormine-hub: port ${port} on 127.0.0.1 is already in use; pick another with --port`,
      );
    } finally {
      busy.close();
    }
  });

  it('the XSD check does reject a broken sitemap (the validation is real)', () => {
    const bad = join(dir, 'bad.xml');
    writeFileSync(
      bad,
      '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>not a url</loc><priority>2</priority></url></urlset>',
    );
    expect(() =>
      execFileSync('xmllint', ['--noout', '--schema', join(FIXTURES, 'sitemap.xsd'), bad], { stdio: 'pipe' }),
    ).toThrow();
  });

  it('serves a game page with the name escaped, and static files', async () => {
    const page = await fetch(`${base}/games/no-head`);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain('No Head &lt;b&gt;Game&lt;/b&gt;');
    expect(html).not.toContain('<b>Game</b>');
    const css = await fetch(`${base}/hub.css`);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect((await fetch(`${base}/../package.json`)).status).toBe(404); // fetch resolves the ..
  });

  it('refuses static-file traversal and hidden files with 403 path_forbidden', async () => {
    const url = new URL(base);
    const raw = (path: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest({ host: url.hostname, port: url.port, path }, (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      });
    for (const path of [
      '/../package.json',
      '/..%2fpackage.json',
      '/%2e%2e/%2e%2e/package.json',
      '/hub.css/..%2f..%2fpackage.json',
      '/..%5cpackage.json',
      '/.env',
    ]) {
      const res = await raw(path);
      expect(res.status, path).toBe(403);
      expect(JSON.parse(res.body), path).toMatchObject({ statusCode: 403, code: 'path_forbidden' });
      expect(res.body, path).not.toContain('"name"'); // nothing of package.json
    }
    expect((await raw('/hub.css')).status).toBe(200);
  });

  it('refuses a games file with a bad entry, naming the file and the field', async () => {
    const bad = join(dir, 'bad-games.json');
    writeFileSync(
      bad,
      JSON.stringify({ games: [{ id: 'Bad Id', name: 'x', url: 'http://a', icon: '/i', category: 'c' }] }),
    );
    await expect(createHub({ gamesFile: bad })).rejects.toThrow(/bad-games\.json: games\[0\]\/id/);
  });
});

describe('hub index page in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await testBrowser();
    mkdirSync(SCREENSHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('lists the games with live online/offline badges and shows the ads', async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    await page.goto(`${base}/`);
    await page.waitForSelector('body[data-status-ready="true"]', { timeout: WAIT_TIMEOUT_MS });
    const badge = (id: string) => page.locator(`[data-game-id="${id}"] .badge`).textContent();
    expect(await badge('star-miner')).toBe('online');
    expect(await badge('no-head')).toBe('offline');
    expect(await badge('sleepy')).toBe('offline');
    expect(await badge('gone')).toBe('offline');
    expect(await page.locator('#summary').textContent()).toBe('1 of 4 online');
    // The name is shown as text, not interpreted as HTML.
    expect(await page.locator('[data-game-id="no-head"] h2').textContent()).toBe('No Head <b>Game</b>');
    expect(await page.locator('.ads[data-position="sidebar"] [data-ad-id="side"]').count()).toBe(1);
    await page.waitForSelector('.popup[data-ad-id="pop"]', { timeout: WAIT_TIMEOUT_MS });
    await page.screenshot({ path: join(SCREENSHOTS, 'index-with-popup.png') });
    await page.locator('.popup .close').click();
    expect(await page.locator('.popup').count()).toBe(0);
    await page.locator('.filters button', { hasText: 'arcade' }).click();
    expect(await page.locator('.game:visible').count()).toBe(2);
    await page.locator('.filters button', { hasText: 'all' }).click();
    await page.screenshot({ path: join(SCREENSHOTS, 'index.png'), fullPage: true });
    await page.goto(`${base}/games/star-miner`);
    await page.waitForSelector('.badge.online', { timeout: WAIT_TIMEOUT_MS });
    await page.screenshot({ path: join(SCREENSHOTS, 'game-page.png') });
    await page.close();
  });

  it("shows sitemap.xml as Chromium's XML tree, with nothing blocked by the content policy", async () => {
    const page = await browser.newPage({ viewport: { width: 900, height: 500 } });
    const blocked: string[] = [];
    page.on('console', (m) => {
      if (m.text().includes('Content Security Policy')) blocked.push(m.text());
    });
    await page.goto(`${base}/sitemap.xml`);
    // The viewer's styled tree: its banner first. Blocked styles leave the raw text of the
    // document above it (the garbled page).
    // (The page's functions are given as text: the hub's types have no DOM.)
    await page.waitForFunction("document.body?.innerText.startsWith('This XML file does not')");
    expect(await page.evaluate<string>('document.body.innerText')).toContain(
      '<loc>https://hub.example.org/games/star-miner</loc>',
    );
    expect(blocked).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, 'sitemap.png') });
    await page.close();
  });
});
