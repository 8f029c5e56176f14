import { createClient, type Signer, type TensormineClient } from '@tensormine/client';
import type { MinerSettings } from './settings.js';

/**
 * The SDK client of a one-shot command (status, register, lattice, devices): the validators
 * of the settings, in failover order, without background health probes.
 */
export async function withClient<T>(
  settings: Pick<MinerSettings, 'urls' | 'protocol'>,
  signer: Signer | undefined,
  fn: (client: TensormineClient) => Promise<T>,
): Promise<T> {
  const client = createClient({
    urls: [...settings.urls],
    ...(signer ? { signer } : {}),
    protocol: settings.protocol,
    healthCheckIntervalMs: 0,
  });
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}
