/**
 * Marketplace bench: how long one order placement holds the database, and so how long another
 * request waits behind it (issue 21, item 5b), at the bound of `marketMaxFills` (100 fills,
 * the default) against the old cap of 1,000, side by side in one run.
 *
 *   npm run bench:market -w @tensormine/validator      (writes its section of docs/benchmarks.md)
 *
 * A validator in this process on a data directory on disk (node:sqlite, every commit fsynced as
 * in production), `marketMaxFills` 1000 so that both sizes can be placed. Each round rests 1,000
 * sells of 0.2 PTM straight in the storage, then places a buy crossing FILLS of them and, one
 * event-loop turn later, a transfer of another key: the transfer's answer waits for the
 * placement's transaction. Rounds alternate 100 and 1,000 fills; medians of ROUNDS each.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type KeyPair,
  keyPairFromSecret,
  MARKET_ACCOUNT,
  parseAmount,
  parsePrice,
  signRequest,
  taggedHash,
  toHex,
  utf8,
} from '@tensormine/protocol';
import { machineLine, writeSection } from '../../protocol/bench/harness.js';
import { createValidator, type Validator } from '../src/app.js';
import { fmt, median, table } from './support.js';

const DOC_PATH = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/benchmarks.md');
const COMMAND = 'npm run bench:market -w @tensormine/validator';
const ROUNDS = Number(process.env.MARKET_BENCH_ROUNDS ?? 5);
const key = (name: string): KeyPair => keyPairFromSecret(taggedHash('bench/market', utf8(name)));
const SELLER = key('seller');
const BUYER = key('buyer');
const OTHER = key('other');
const hex = (k: KeyPair) => toHex(k.publicKey);

function signed(v: Validator, k: KeyPair, url: string, body: unknown) {
  const payload = JSON.stringify(body);
  const headers = signRequest({ method: 'POST', path: url, body: payload, secretKey: k.secretKey });
  return v.inject({
    method: 'POST',
    url,
    headers: { ...headers, 'content-type': 'application/json' },
    payload,
  });
}

/** Rests `count` sells of 0.2 PTM at 0.05 straight in the storage (no matching, one transaction). */
async function restSells(v: Validator, count: number): Promise<void> {
  await v.context.storage.transaction(async (tx) => {
    const now = Math.floor(v.context.now() / 1000);
    const amount = parseAmount('0.2', 'PTM');
    for (let i = 0; i < count; i++) {
      const serial = await tx.economy.orders.nextSerial();
      const id = `o-${serial}`;
      await tx.ledger.apply([
        { type: 'order', pubkey: hex(SELLER), token: 'PTM', amount: -amount, timestamp: now, ref: id },
        { type: 'order', pubkey: MARKET_ACCOUNT, token: 'PTM', amount, timestamp: now, ref: id },
      ]);
      await tx.economy.orders.insert({
        id,
        serial,
        pubkey: hex(SELLER),
        side: 'sell',
        token: 'PTM',
        quoteToken: 'USDC',
        price: parsePrice('0.05'),
        amount,
        filled: 0n,
        escrow: amount,
        status: 'open',
        createdAt: now,
        closedAt: null,
      });
    }
  });
}

/** One round: a buy making `fills` fills, and a transfer sent while it runs. */
async function round(v: Validator, fills: number): Promise<{ placeMs: number; waitMs: number }> {
  await restSells(v, 1000);
  const t0 = performance.now();
  const placing = signed(v, BUYER, '/marketplace/order', {
    type: 'buy',
    token: 'PTM',
    amount: (fills * 0.2).toFixed(1),
    price: '0.05',
    pubkey: hex(BUYER),
  }).then((res) => {
    if (res.statusCode !== 200 || res.json().fills.length !== fills)
      throw new Error(`placement: ${res.body}`);
    return performance.now() - t0;
  });
  await new Promise((resolve) => setImmediate(resolve));
  const t1 = performance.now();
  const transfer = await signed(v, OTHER, '/transfer', {
    from: hex(OTHER),
    to: hex(SELLER),
    token: 'USDC',
    amount: '0.01',
  });
  if (transfer.statusCode !== 200) throw new Error(`transfer: ${transfer.body}`);
  const waitMs = performance.now() - t1;
  // Cancel what is left, so that the next round starts from an empty book.
  const placeMs = await placing;
  await v.context.storage.transaction(async (tx) => {
    const resting = await tx.economy.orders.listResting({ afterSerial: 0, limit: 10_000 });
    for (const o of resting) {
      const token = o.side === 'sell' ? o.token : o.quoteToken;
      if (o.escrow > 0n) {
        await tx.ledger.apply([
          { type: 'order', pubkey: MARKET_ACCOUNT, token, amount: -o.escrow, timestamp: 0, ref: o.id },
          { type: 'order', pubkey: o.pubkey, token, amount: o.escrow, timestamp: 0, ref: o.id },
        ]);
      }
      await tx.economy.orders.update(o.id, {
        filled: o.filled,
        escrow: 0n,
        status: 'cancelled',
        closedAt: 0,
      });
    }
  });
  return { placeMs, waitMs };
}

async function main(): Promise<void> {
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'bench-market-'));
  const v = await createValidator({
    dataDir: dir,
    logLevel: 'silent',
    marketMaxFills: 1000,
    rateLimitPerSecond: 1_000_000,
    rateLimitBurst: 1_000_000,
    keyRateLimitPerSecond: 1_000_000,
    keyRateLimitBurst: 1_000_000,
    genesis: {
      reserve: '0',
      pools: [],
      allocations: [
        { pubkey: hex(SELLER), token: 'PTM', amount: '1000000' },
        { pubkey: hex(BUYER), token: 'USDC', amount: '1000000' },
        { pubkey: hex(OTHER), token: 'USDC', amount: '1000' },
      ],
    },
  });
  const results: Record<number, { placeMs: number; waitMs: number }[]> = { 100: [], 1000: [] };
  try {
    await round(v, 100); // warm-up
    for (let r = 0; r < ROUNDS; r++) {
      for (const fills of r % 2 === 0 ? [100, 1000] : [1000, 100]) {
        const m = await round(v, fills);
        results[fills]!.push(m);
        console.log(
          `  round ${r + 1}, ${fills} fills: placement ${fmt(m.placeMs)} ms, transfer waited ${fmt(m.waitMs)} ms`,
        );
      }
    }
  } finally {
    await v.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const row = (fills: number) => {
    const place = median(results[fills]!.map((m) => m.placeMs));
    const wait = median(results[fills]!.map((m) => m.waitMs));
    return [
      `${fmt(fills)} fills`,
      `**${fmt(place)}**`,
      fmt((place * 1000) / fills),
      `**${fmt(wait)}**`,
      results[fills]!.map((m) => fmt(m.waitMs)).join(', '),
    ];
  };
  const ratio = median(results[100]!.map((m) => m.waitMs)) / median(results[1000]!.map((m) => m.waitMs));
  const seconds = (performance.now() - started) / 1000;
  writeSection(
    DOC_PATH,
    'market',
    `## Marketplace: work of one placement

Command: \`${COMMAND}\` (measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}; ${fmt(seconds)} s; the machine was shared, read the ratio).

A validator on a data directory on disk (SQLite, \`synchronous = FULL\`). Each round rests
1,000 sells of 0.2 PTM, then places one buy crossing 100 of them (the default bound
\`marketMaxFills\`) or 1,000 (the cap before issue 21), and one event-loop turn later a transfer
of another key, which waits for the placement's transaction (one at a time). Rounds
alternate, ${ROUNDS} of each size; medians.

${table(
  ['placement', 'placement ms', 'µs per fill', 'transfer waited ms', 'runs: transfer waited ms'],
  [row(100), row(1000)],
)}

At the default bound a transfer waits ${ratio.toFixed(2)}x what it waited behind a 1,000-fill
placement: the work one placement can do is bounded by \`marketMaxFills\` fills (each fill is
a few ledger entries, two order updates and a fill row), and the rest of the order rests.`,
  );
  console.log(`wrote the market section of ${DOC_PATH}`);
}

await main();
