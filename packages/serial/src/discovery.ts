import { constants } from 'node:fs';
import { access, readdir, readFile, realpath } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { BindingInterface, PortInfo } from './binding.js';
import { defaultBinding } from './transport.js';

/**
 * USB-serial chips found on ESP32 boards, by USB vendor and product id (lowercase hex, as
 * serialport reports them). `miner mine --device auto` opens the ports whose chip is in this
 * table; any other port can be named explicitly (`--device /dev/ttyUSB0`).
 */
export interface UsbSerialChip {
  readonly vendorId: string;
  readonly productId: string;
  readonly chip: string;
  readonly boards: string;
}

export const ESP32_USB_SERIAL_CHIPS: readonly UsbSerialChip[] = [
  {
    vendorId: '10c4',
    productId: 'ea60',
    chip: 'Silicon Labs CP210x',
    boards: 'ESP32-DevKitC, NodeMCU-32S, most DevKits',
  },
  {
    vendorId: '1a86',
    productId: '7523',
    chip: 'WCH CH340 / CH341',
    boards: 'low-cost ESP32 and ESP8266 boards',
  },
  { vendorId: '1a86', productId: '55d4', chip: 'WCH CH9102', boards: 'newer ESP32 DevKits, LilyGO' },
  { vendorId: '1a86', productId: '55d3', chip: 'WCH CH343', boards: 'some ESP32-S3 and LilyGO boards' },
  { vendorId: '0403', productId: '6001', chip: 'FTDI FT232R', boards: 'FTDI adapters, older boards' },
  { vendorId: '0403', productId: '6010', chip: 'FTDI FT2232', boards: 'ESP-WROVER-KIT (JTAG + UART)' },
  { vendorId: '0403', productId: '6014', chip: 'FTDI FT232H', boards: 'FTDI adapters' },
  { vendorId: '0403', productId: '6015', chip: 'FTDI FT231X / FT230X', boards: 'FTDI adapters' },
  {
    vendorId: '303a',
    productId: '1001',
    chip: 'Espressif USB-Serial/JTAG (native USB)',
    boards: 'ESP32-S3, ESP32-C3, ESP32-C6, ESP32-H2 on their own USB port',
  },
  {
    vendorId: '303a',
    productId: '0002',
    chip: 'Espressif USB CDC (ROM / TinyUSB)',
    boards: 'ESP32-S2, ESP32-S3 native USB CDC',
  },
];

/** The table entry of a port's chip, if it is one. */
export function usbSerialChip(
  port: Pick<PortInfo, 'vendorId' | 'productId'>,
  table: readonly UsbSerialChip[] = ESP32_USB_SERIAL_CHIPS,
): UsbSerialChip | undefined {
  const vid = port.vendorId?.toLowerCase().replace(/^0x/, '');
  const pid = port.productId?.toLowerCase().replace(/^0x/, '');
  if (!vid || !pid) return undefined;
  return table.find((c) => c.vendorId === vid && c.productId === pid);
}

/**
 * The serial ports of this machine: the binding's `list()`, and on Linux, when that fails (it
 * runs `udevadm`, missing in many containers), a scan of /sys/class/tty that reads the USB
 * vendor and product ids from sysfs.
 */
export async function listPorts(binding: BindingInterface = defaultBinding()): Promise<PortInfo[]> {
  try {
    return await binding.list();
  } catch (error) {
    if (process.platform !== 'linux' || binding !== defaultBinding()) throw error;
    return listLinuxSysfs();
  }
}

/** The ports of `listPorts` whose USB chip is in the table. */
export async function listBoardPorts(
  binding?: BindingInterface,
  table: readonly UsbSerialChip[] = ESP32_USB_SERIAL_CHIPS,
): Promise<PortInfo[]> {
  return (await listPorts(binding)).filter((p) => usbSerialChip(p, table) !== undefined);
}

/** Serial ports from /sys/class/tty with the USB ids of their device (Linux). */
export async function listLinuxSysfs(root = '/sys/class/tty'): Promise<PortInfo[]> {
  let names: string[];
  try {
    names = await readdir(root);
  } catch {
    return [];
  }
  const ports: PortInfo[] = [];
  for (const name of names) {
    if (!/^tty(USB|ACM)\d+$/.test(name)) continue;
    const info: PortInfo = {
      path: `/dev/${name}`,
      manufacturer: undefined,
      serialNumber: undefined,
      pnpId: undefined,
      locationId: undefined,
      vendorId: undefined,
      productId: undefined,
    };
    try {
      // Walk up from the tty's device to the USB device (the directory holding idVendor).
      let dir = await realpath(join(root, name, 'device'));
      for (let i = 0; i < 4 && dir !== '/'; i++, dir = dirname(dir)) {
        const vendor = await readFile(join(dir, 'idVendor'), 'utf8').catch(() => undefined);
        if (vendor === undefined) continue;
        info.vendorId = vendor.trim();
        info.productId = (await readFile(join(dir, 'idProduct'), 'utf8')).trim();
        info.manufacturer =
          (await readFile(join(dir, 'manufacturer'), 'utf8').catch(() => '')).trim() || undefined;
        info.serialNumber = (await readFile(join(dir, 'serial'), 'utf8').catch(() => '')).trim() || undefined;
        info.locationId = basename(dir);
        break;
      }
    } catch {
      // Not a USB tty: listed without ids.
    }
    ports.push(info);
  }
  return ports;
}

/** The udev rules file of the repository (docs/udev/99-tensormine.rules), for messages. */
export const UDEV_RULES_PATH = 'docs/udev/99-tensormine.rules';

/**
 * What `--device auto` says when it finds no board: the USB chips it looked for, the serial
 * ports it did see (with their USB ids, so a board on another bridge can be named with
 * --device), and how to fix the usual cause on Linux, permissions (the `dialout` group, udev
 * rules). `ports` is what `listPorts` returned; `canOpen` tells whether a path may be opened
 * read-write by this user (default: fs.access).
 */
export async function noBoardsHelp(
  ports: readonly PortInfo[],
  table: readonly UsbSerialChip[] = ESP32_USB_SERIAL_CHIPS,
  canOpen: (path: string) => Promise<boolean> = writable,
): Promise<string[]> {
  const chips = [...new Map(table.map((c) => [c.chip, c])).values()]
    .map(
      (c) =>
        `${c.chip} (${table
          .filter((t) => t.chip === c.chip)
          .map((t) => `${t.vendorId}:${t.productId}`)
          .join(', ')})`,
    )
    .join('; ');
  const lines = [`no ESP32 board found: --device auto looks for USB serial bridges ${chips}`];
  const usb = ports.filter((p) => p.vendorId !== undefined);
  if (usb.length === 0) {
    lines.push(
      'no USB serial port is present: check the cable (a charge-only cable has no data lines) and `dmesg | tail`',
    );
  } else {
    lines.push(
      `USB serial ports present, none of them a known bridge: ${usb.map((p) => `${p.path} (${p.vendorId}:${p.productId}${p.manufacturer ? ` ${p.manufacturer}` : ''})`).join(', ')}; name one with --device <path>`,
    );
  }
  const denied: string[] = [];
  for (const p of ports) if (p.vendorId !== undefined && !(await canOpen(p.path))) denied.push(p.path);
  if (denied.length > 0) lines.push(`you may not open ${denied.join(', ')}: permission denied`);
  if (process.platform === 'linux') {
    lines.push(
      'permissions on Linux: add yourself to the dialout group (`sudo usermod -aG dialout $USER`, then log out and in), ' +
        `or install the udev rules for the supported bridges: \`sudo cp ${UDEV_RULES_PATH} /etc/udev/rules.d/ && sudo udevadm control --reload-rules && sudo udevadm trigger\``,
    );
  }
  return lines;
}

async function writable(path: string): Promise<boolean> {
  try {
    await access(path, constants.R_OK | constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
