/**
 * The baseline of the HTTP bench: a bare Fastify 5 server with one GET /health answering a
 * small JSON object of the same shape as the validator's (no hooks, no schemas, no plugins).
 * Prints "listening on URL" like the validator's bin; closes on SIGTERM or SIGINT.
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
