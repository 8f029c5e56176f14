/**
 * The metrics of every service: off by default (nothing per request, no route), `/metrics` on the
 * service port behind a token, or on a listener of its own; the HTTP histogram by route and
 * status, the rate-limit refusals, series read at scrape time, and the error shape of refusals.
 */
import { Histogram, Registry } from 'prom-client';
import { afterEach, describe, expect, test } from 'vitest';
import {
  ApiError,
  createServiceApp,
  HttpMetrics,
  metricsExposure,
  metricsSettings,
  resolveSettings,
  type ServiceAppOptions,
  ServiceMetrics,
} from '../src/index.js';

const TOKEN = 'metrics-token-0123456789';
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

function app(options: Partial<ServiceAppOptions> = {}) {
  const a = createServiceApp({
    service: 'hub',
    logLevel: 'silent',
    rateLimit: { burst: 3, perSecond: 1 },
    now: () => 0,
    ...options,
  });
  a.get('/things/:id', async (request) => {
    if ((request.params as { id: string }).id === 'missing') throw new ApiError('game_not_found', 'no');
    return { ok: true };
  });
  closers.push(() => a.close());
  return a;
}

/** The value of one series of an exposition, e.g. `name{a="b"}`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('service metrics', () => {
  test('off by default: no /metrics route, and app.metrics still takes a service’s series', async () => {
    const a = app();
    expect((await a.inject('/metrics')).statusCode).toBe(404);
    expect(a.metrics).toBeInstanceOf(ServiceMetrics);
    expect(metricsExposure({})).toBe('off');
  });

  test('with a token: /metrics on the service port, 401 in the documented shape without it', async () => {
    const a = app({
      metrics: { version: '1.2.3', metricsToken: TOKEN },
      rateLimit: { burst: 100, perSecond: 1 },
    });
    const refused = await a.inject('/metrics');
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['www-authenticate']).toBe('Bearer realm="tensormine-metrics"');
    expect(refused.json()).toMatchObject({ statusCode: 401, code: 'unauthorized', error: 'Unauthorized' });
    const wrong = await a.inject({
      url: '/metrics',
      headers: { authorization: 'Bearer wrong-token-000000000' },
    });
    expect(wrong.json().message).toBe('the metrics token is wrong');

    await a.inject('/things/1');
    await a.inject('/things/missing');
    await a.inject('/nowhere');
    // The HEAD route Fastify adds beside a GET route: its own series, observed once per answer.
    await a.inject({ method: 'HEAD', url: '/things/1' });
    await a.inject({ method: 'HEAD', url: '/things/1' });
    const res = await a.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = res.body;
    expect(sample(text, 'tensormine_build_info{service="hub",version="1.2.3"}')).toBe(1);
    expect(
      sample(text, 'http_request_duration_seconds_count{method="GET",route="/things/:id",status_code="200"}'),
    ).toBe(1);
    expect(
      sample(text, 'http_request_duration_seconds_count{method="GET",route="/things/:id",status_code="404"}'),
    ).toBe(1);
    expect(
      sample(text, 'http_request_duration_seconds_count{method="GET",route="(unmatched)",status_code="404"}'),
    ).toBe(1);
    expect(
      sample(
        text,
        'http_request_duration_seconds_count{method="HEAD",route="/things/:id",status_code="200"}',
      ),
    ).toBe(2);
    expect(text).toMatch(/^process_cpu_seconds_total \d/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
  });

  test('the HTTP histogram, kept by the kit, is exposed exactly as prom-client exposes one', async () => {
    const metrics = new ServiceMetrics('hub', '0');
    const http = new HttpMetrics(metrics);
    const reference = new Registry();
    const histogram = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'reference',
      labelNames: ['method', 'route', 'status_code'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [reference],
    });
    const things = http.route('/things/:id');
    const unmatched = http.route(undefined);
    // On a bound, between bounds, past the last one, and zero.
    const answers: [string, number, number][] = [
      ['GET', 200, 0.001],
      ['GET', 200, 0.0031],
      ['GET', 404, 12],
      ['HEAD', 200, 0],
      ['GET', 200, 0.25],
    ];
    for (const [method, status, seconds] of answers) {
      things.observe(method, status, seconds);
      histogram.observe({ method, route: '/things/:id', status_code: String(status) }, seconds);
    }
    unmatched.observe('POST', 404, 0.02);
    histogram.observe({ method: 'POST', route: '(unmatched)', status_code: '404' }, 0.02);
    const lines = (text: string) =>
      text.split('\n').filter((line) => line.startsWith('http_request_duration_seconds_'));
    const ours = lines(await metrics.text());
    expect(ours).toEqual(lines(await reference.metrics()));
    expect(ours).toContain(
      'http_request_duration_seconds_bucket{le="0.005",method="GET",route="/things/:id",status_code="200"} 2',
    );
    // reset (prom-client's registry.resetMetrics) zeroes the series, which keep counting after it.
    metrics.registry.resetMetrics();
    things.observe('GET', 200, 0.001);
    const after = await metrics.text();
    expect(
      sample(
        after,
        'http_request_duration_seconds_count{method="GET",route="/things/:id",status_code="200"}',
      ),
    ).toBe(1);
    expect(
      sample(
        after,
        'http_request_duration_seconds_count{method="GET",route="/things/:id",status_code="404"}',
      ),
    ).toBe(0);
  });

  test('rate-limit refusals are counted by limit', async () => {
    const a = app({ metrics: { version: '0', metricsPort: 0 } });
    for (let i = 0; i < 5; i++) await a.inject('/things/1');
    const text = await (await fetch(`${a.metrics.listenerUrl}/metrics`)).text();
    // A burst of 3: two requests were refused, and answered 429.
    expect(sample(text, 'tensormine_rate_limited_requests_total{limit="address"}')).toBe(2);
    expect(
      sample(text, 'http_request_duration_seconds_count{method="GET",route="/things/:id",status_code="429"}'),
    ).toBe(2);
  });

  test('a listener of its own: /metrics there only, behind the token when one is set', async () => {
    const a = app({
      metrics: { version: '0', metricsPort: 0, metricsHost: '127.0.0.1', metricsToken: TOKEN },
    });
    await a.listen({ host: '127.0.0.1', port: 0 });
    const url = a.metrics.listenerUrl;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await a.inject('/metrics')).statusCode).toBe(404);
    const refused = await fetch(`${url}/metrics`);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ code: 'unauthorized' });
    const other = await fetch(`${url}/things/1`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(other.status).toBe(404);
    expect(((await other.json()) as { code: string }).code).toBe('not_found');
    const post = await fetch(`${url}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const ok = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('tensormine_build_info');
    await a.close();
    await expect(fetch(`${url}/metrics`)).rejects.toThrow();
  });

  test('series read at scrape time, after the before-scrape hooks', async () => {
    const m = new ServiceMetrics('test', '0');
    let total = 0;
    let snapshot = { a: 0, b: 0 };
    m.beforeScrape(() => {
      snapshot = { a: total, b: 2 * total };
    });
    m.counterFrom('things_total', 'Things', () => total);
    m.gaugeFrom(
      'sides',
      'Sides',
      () => [
        [{ side: 'a' }, snapshot.a],
        [{ side: 'b' }, snapshot.b],
      ],
      ['side'],
    );
    total = 7;
    const text = await m.text();
    expect(sample(text, 'things_total')).toBe(7);
    expect(sample(text, 'sides{side="a"}')).toBe(7);
    expect(sample(text, 'sides{side="b"}')).toBe(14);
    total = 9;
    expect(sample(await m.text(), 'things_total')).toBe(9);
  });

  test('the settings: environment variables of the service’s prefix, a token of 16 characters or more', () => {
    const specs = metricsSettings('HUB');
    const { config } = resolveSettings(specs, {
      env: { HUB_METRICS_PORT: '9464', HUB_METRICS_TOKEN: TOKEN },
    });
    expect(config).toEqual({ metricsPort: 9464, metricsHost: '127.0.0.1', metricsToken: TOKEN });
    expect(metricsExposure(config)).toBe('own-port');
    expect(() => resolveSettings(specs, { env: { HUB_METRICS_TOKEN: 'short' } })).toThrow(
      'HUB_METRICS_TOKEN: a metrics token needs 16 to 4096 characters without spaces',
    );
  });
});
