/**
 * The baseline of the HTTP benches: a bare Fastify 5 server (no hooks, no schemas, no plugins,
 * no logger). Prints "listening on URL" like the validator's bin; closes on SIGTERM or SIGINT.
 *
 * - GET /health answers a small JSON object of the same shape as the validator's;
 * - BARE_ROUTES (JSON, path -> body) adds a GET route per path answering exactly that body as
 *   JSON (one constant string: the cheapest answer a Fastify route can give). The lattice-reads
 *   bench compares the validator's routes with these, same paths and same bytes.
 */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
const startedAt = Date.now();

app.get('/health', async () => ({
  status: 'ok',
  service: 'bare-fastify',
  version: '4.1',
  protocols: ['4.0', '4.1'],
  software_version: '0.1.0',
  node_id: 'node-0000000000000000',
  uptime_s: Math.floor((Date.now() - startedAt) / 1000),
}));

const routes = JSON.parse(process.env.BARE_ROUTES ?? '{}') as Record<string, string>;
for (const [path, body] of Object.entries(routes)) {
  app.get(path, async (_request, reply) => reply.type('application/json; charset=utf-8').send(body));
}

// The validator's accept queue (4096), so that 1,000 connections compare servers, not backlogs.
const url = await app.listen({ host: '127.0.0.1', port: 0, backlog: 4096 });
console.log(`bare fastify listening on ${url}`);

let closing = false;
const stop = () => {
  if (closing) return;
  closing = true;
  void app.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
