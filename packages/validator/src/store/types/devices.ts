// Devices and miners: part of the storage interface (../types.ts).

/** How a device is called back (docs/protocol.md 4.17). */
export type DeviceCallbackMode = 'none' | 'on' | 'relayed' | 'off';

export interface DeviceRecord {
  readonly deviceId: string;
  readonly pubkey: string;
  readonly deviceType: string;
  readonly port: number | null;
  readonly registeredAt: number;
  readonly lastSeen: number;
  /** The source address of the registration, where callbacks go; null without one. */
  readonly callbackAddress: string | null;
  readonly callbackMode: DeviceCallbackMode;
  /** The hash rate the device reported (nonces per second); null when it did not. */
  readonly hashrate: number | null;
}

export interface DeviceRepo {
  /** Registers or updates (same pubkey: new type, port, callback and hash rate; registeredAt kept). */
  upsert(device: DeviceRecord): Promise<DeviceRecord>;
  get(pubkey: string): Promise<DeviceRecord | undefined>;
  touch(pubkey: string, lastSeen: number): Promise<void>;
  /**
   * Ordered by registeredAt, then pubkey; with `after`, only the devices after that one in this
   * order (keyset paging: the cost of a page does not grow with the devices before it).
   */
  list(filter: {
    deviceType?: string;
    limit: number;
    after?: { readonly registeredAt: number; readonly pubkey: string };
  }): Promise<DeviceRecord[]>;
  /**
   * Registered devices per type (the types with at least one): counters kept by `upsert`, so
   * reading them does not count the devices.
   */
  countByType(): Promise<Record<string, number>>;
  /** Devices other than `exceptPubkey` called back at `address`. */
  countAtAddress(address: string, exceptPubkey: string): Promise<number>;
  /** Devices called back (mode `on`), oldest registration first, at most `limit`. */
  listCallbacks(limit: number): Promise<DeviceRecord[]>;
}

export interface MinerStats {
  readonly pubkey: string;
  readonly proofsAccepted: number;
  readonly proofsRejected: number;
  readonly blocksAccepted: number;
  readonly lastSeen: number | null;
}

export interface MinerRepo {
  get(pubkey: string): Promise<MinerStats | undefined>;
  record(
    pubkey: string,
    change: { proofsAccepted?: number; proofsRejected?: number; blocksAccepted?: number; seenAt: number },
  ): Promise<void>;
  /**
   * `record`, and the device's `last_seen` set to `seenAt` (`devices.touch`): one statement on
   * PostgreSQL (the miner's row locked first, then the device's), two on SQLite.
   */
  recordAndTouch(
    pubkey: string,
    change: { proofsAccepted?: number; proofsRejected?: number; blocksAccepted?: number; seenAt: number },
  ): Promise<void>;
}
