import type { EventEmitter } from 'node:events';
import type {
  DeviceBackend,
  DeviceOutcomes,
  DeviceSelfTest,
  DeviceUnitCounters,
  FoundResult,
} from '@tensormine/miner';
import { CliError } from './errors.js';

/**
 * The serial boards (ESP32 over USB) as the CLI sees them: one DeviceBackend for the miner
 * (@tensormine/serial's SerialFleet) plus what `miner devices --local-boards` and the TUI's
 * device rows show. @tensormine/serial (and its native serialport binding) is loaded only
 * when boards are asked for, so that a machine without boards never loads it.
 */
export interface BoardRow {
  /** `serial:<chip id>` */
  readonly id: string;
  readonly chipId: string;
  /** The port it is on now; undefined while unplugged. */
  readonly port: string | undefined;
  /** `ok`, `idle`, `paused`, `no device`, `self-test failed`, `self-test`, `connecting`, `error`, ... */
  readonly state: string;
  /** States `self-test failed` and `self-test` (timed out, tried again): why, and when the next try is. */
  readonly selfTest?: DeviceSelfTest;
  readonly firmware: string;
  readonly board: string;
  /** Nonces per second: the 10 s window, else the board's last report. */
  readonly rate: number | undefined;
  /** The hexchain rate the board announced in its HELLO, nonces per second. */
  readonly announcedRate: number;
  readonly lastValidWorkAtMs: number | undefined;
  /** Found, hardware errors (wrong results), CRC errors, resyncs, retransmissions, reboots, losses. */
  readonly counters: DeviceUnitCounters;
  /** Accepted and rejected results, when known (a running miner's boards). */
  readonly outcomes?: DeviceOutcomes;
}

/** A port that is open but has no identified board behind it (yet). */
export interface PortRow {
  readonly path: string;
  readonly state: string;
  readonly lastError: string | undefined;
}

export interface SerialBoards extends DeviceBackend {
  rows(): BoardRow[];
  /** Open ports without an identified board. */
  emptyPorts(): PortRow[];
  /** Resolves when every open port has connected (or failed), or after `timeoutMs`. */
  settled(timeoutMs?: number): Promise<void>;
  /** Board arrivals and departures, for log lines. */
  readonly boardEvents?: EventEmitter;
  /** With `auto` and no board: what was looked for and how to fix permissions (else empty). */
  noBoardsHelp(): Promise<string[]>;
}

export interface SerialBoardsOptions {
  /** `auto` and/or port paths (the --device values). */
  readonly devices: readonly string[];
  /** Results are made durable here before a board's RESULT is acknowledged (the miner's journal). */
  readonly journal?: () => { add(found: FoundResult): Promise<void> } | undefined;
  /** Run the known-answer self-test when a board connects (default true). */
  readonly selfTest?: boolean;
}

/**
 * Opens the boards named by --device (`auto`: every port whose USB chip is an ESP32 bridge,
 * with hotplug; a path: that port, whatever it is).
 * @throws CliError `failure` when the serial support cannot be loaded.
 */
export async function openSerialBoards(options: SerialBoardsOptions): Promise<SerialBoards> {
  let serial: typeof import('@tensormine/serial');
  try {
    serial = await import('@tensormine/serial');
  } catch (error) {
    throw new CliError(
      'failure',
      `serial boards are not available on this machine: ${(error as Error).message}`,
      ['mine without --device, or reinstall with the serialport native binding (npm install)'],
      { cause: error },
    );
  }
  const ports = options.devices.filter((d) => d !== 'auto');
  const fleet = new serial.SerialFleet({
    auto: options.devices.includes('auto'),
    ports,
    ...(options.journal ? { journal: options.journal } : {}),
    ...(options.selfTest === undefined ? {} : { selfTest: options.selfTest }),
  });
  return Object.assign(fleet, {
    rows(): BoardRow[] {
      const selfTests = new Map(fleet.units().map((u) => [u.id, u.selfTest]));
      return fleet.boards().map((b) => {
        const selfTest = selfTests.get(b.id);
        return {
          id: b.id,
          chipId: b.chipId,
          port: b.port,
          state: b.state,
          ...(selfTest === undefined ? {} : { selfTest }),
          firmware: b.firmware,
          board: b.board,
          rate: b.hashrate['10s'] ?? b.rate,
          announcedRate: b.hexRate,
          lastValidWorkAtMs: b.lastValidWork?.atMs,
          counters: b.counters,
        };
      });
    },
    emptyPorts(): PortRow[] {
      return fleet
        .ports()
        .filter((p) => p.chipId === undefined)
        .map((p) => ({ path: p.path, state: p.state, lastError: p.lastError }));
    },
  });
}
