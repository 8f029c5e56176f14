import { EventEmitter } from 'node:events';
import { SerialPortStream } from '@serialport/stream';
import { SerialPort } from 'serialport';
import type { BindingInterface, PortInfo } from './binding.js';
import { FrameDecoder } from './codec/decoder.js';
import type { Frame } from './codec/frame.js';
import { SerialError } from './errors.js';

/** The link's fixed start rate (docs/serial-protocol.md section 1). */
export const DEFAULT_BAUD_RATE = 115_200;

/** The serialport binding that talks to real ports on this platform (bindings-cpp, autodetected). */
export function defaultBinding(): BindingInterface {
  return SerialPort.binding as unknown as BindingInterface;
}

export interface SerialTransportOptions {
  readonly path: string;
  /** Default 115200. */
  readonly baudRate?: number;
  /** The serialport binding (default: the real one; tests pass serialport's MockBinding). */
  readonly binding?: BindingInterface;
  /**
   * Control lines set right after opening (default both asserted: an ESP32 auto-reset circuit
   * then holds the chip running, and USB CDC firmwares see a terminal). `false` leaves them as
   * the OS set them. A port that cannot set them (a pseudo-terminal: "Inappropriate ioctl for
   * device") is fine: the failure is kept in `controlLinesError` and nothing depends on it.
   */
  readonly controlLines?: { readonly dtr: boolean; readonly rts: boolean } | false;
  /** The partial-frame timeout of the decoder, ms (default 1000). */
  readonly partialFrameTimeoutMs?: number;
  readonly now?: () => number;
}

export interface TransportEvents {
  /** A valid frame (magic, version, length and CRC checked). */
  frame: [frame: Frame];
  /** The port closed: `error` set when it was not closed by `close()` (unplugged, I/O error). */
  close: [error: Error | undefined];
}

/**
 * One open serial port carrying frames: serialport 13 underneath (any binding), the streaming
 * FrameDecoder on the receive side, whole frames written on the send side. It knows nothing of
 * messages or sessions.
 */
export class SerialTransport extends EventEmitter<TransportEvents> {
  readonly path: string;
  readonly decoder: FrameDecoder;
  bytesIn = 0;
  bytesOut = 0;
  /** Why setting DTR/RTS failed, if it did (expected on a pseudo-terminal). */
  controlLinesError: Error | undefined;
  private readonly binding: BindingInterface;
  private readonly options: SerialTransportOptions;
  private port: SerialPortStream | undefined;
  private baud: number;
  private closing = false;
  private expiryTimer: NodeJS.Timeout | undefined;

  constructor(options: SerialTransportOptions) {
    super();
    this.options = options;
    this.path = options.path;
    this.baud = options.baudRate ?? DEFAULT_BAUD_RATE;
    this.binding = options.binding ?? defaultBinding();
    this.decoder = new FrameDecoder({
      ...(options.partialFrameTimeoutMs === undefined
        ? {}
        : { partialTimeoutMs: options.partialFrameTimeoutMs }),
      ...(options.now === undefined ? {} : { now: options.now }),
    });
  }

  get isOpen(): boolean {
    return this.port?.isOpen ?? false;
  }

  get baudRate(): number {
    return this.baud;
  }

  /**
   * Opens the port (8N1, no flow control) and sets the control lines, tolerating a port that
   * cannot set them.
   * @throws SerialError `port_failed`
   */
  async open(): Promise<void> {
    const port = new SerialPortStream({
      binding: this.binding,
      path: this.path,
      baudRate: this.baud,
      dataBits: 8,
      parity: 'none',
      stopBits: 1,
      rtscts: false,
      autoOpen: false,
    });
    await new Promise<void>((resolve, reject) => {
      port.open((error) =>
        error
          ? reject(
              new SerialError(
                'port_failed',
                `${this.path}: cannot open: ${error.message}`,
                {},
                { cause: error },
              ),
            )
          : resolve(),
      );
    });
    this.port = port;
    this.closing = false;
    port.on('data', (chunk: Buffer) => this.onData(chunk));
    port.on('error', () => {}); // 'close' follows a fatal error; it carries the reason
    port.on('close', (error: Error | null) => this.onClose(error ?? undefined));
    const lines = this.options.controlLines ?? { dtr: true, rts: true };
    if (lines !== false) {
      try {
        await new Promise<void>((resolve, reject) =>
          port.set({ dtr: lines.dtr, rts: lines.rts }, (e) => (e ? reject(e) : resolve())),
        );
      } catch (error) {
        this.controlLinesError = error as Error;
      }
    }
    this.expiryTimer = setInterval(() => {
      if (this.decoder.buffered === 0) return;
      for (const frame of this.decoder.expire()) this.emit('frame', frame);
    }, 250);
    this.expiryTimer.unref();
  }

  /**
   * Pulses the ESP32 auto-reset circuit (RTS asserted with DTR released holds EN low for
   * `holdMs`), the way esptool resets a board. Resolves false on a port that cannot set
   * control lines.
   */
  async resetBoard(holdMs = 100): Promise<boolean> {
    const port = this.port;
    if (!port?.isOpen) return false;
    const set = (dtr: boolean, rts: boolean) =>
      new Promise<void>((resolve, reject) => port.set({ dtr, rts }, (e) => (e ? reject(e) : resolve())));
    try {
      await set(false, true);
      await new Promise((r) => setTimeout(r, holdMs));
      await set(false, false);
      return true;
    } catch (error) {
      this.controlLinesError = error as Error;
      return false;
    }
  }

  /**
   * Writes bytes (whole frames).
   * @throws SerialError `port_failed` when the port is closed or the write fails.
   */
  write(bytes: Uint8Array): Promise<void> {
    const port = this.port;
    if (!port?.isOpen) {
      return Promise.reject(new SerialError('port_failed', `${this.path}: write on a closed port`));
    }
    this.bytesOut += bytes.length;
    return new Promise((resolve, reject) => {
      port.write(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), (error) =>
        error
          ? reject(
              new SerialError(
                'port_failed',
                `${this.path}: write failed: ${error.message}`,
                {},
                { cause: error },
              ),
            )
          : resolve(),
      );
    });
  }

  /**
   * Changes the baud rate of the open port (section 6), dropping what the decoder held.
   * @throws SerialError `port_failed`
   */
  async setBaudRate(baudRate: number): Promise<void> {
    const port = this.port;
    if (!port?.isOpen) throw new SerialError('port_failed', `${this.path}: setBaudRate on a closed port`);
    await new Promise<void>((resolve, reject) =>
      port.update({ baudRate }, (error) =>
        error
          ? reject(
              new SerialError('port_failed', `${this.path}: cannot set ${baudRate} baud: ${error.message}`),
            )
          : resolve(),
      ),
    );
    this.baud = baudRate;
    this.decoder.reset();
  }

  /** Closes the port (no `close` error is reported for it). */
  async close(): Promise<void> {
    clearInterval(this.expiryTimer);
    const port = this.port;
    if (!port) return;
    this.closing = true;
    if (!port.isOpen) return;
    await new Promise<void>((resolve) => port.close(() => resolve()));
  }

  private onData(chunk: Buffer): void {
    this.bytesIn += chunk.length;
    for (const frame of this.decoder.push(chunk)) this.emit('frame', frame);
  }

  private onClose(error: Error | undefined): void {
    clearInterval(this.expiryTimer);
    this.port = undefined;
    const reason = this.closing
      ? undefined
      : new SerialError('port_failed', `${this.path}: the port closed${error ? `: ${error.message}` : ''}`);
    this.emit('close', reason);
  }
}

export type { PortInfo };
