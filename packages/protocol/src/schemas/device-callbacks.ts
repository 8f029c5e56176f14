import Type, { type Static } from 'typebox';
import {
  CoordSchema,
  IdSchema,
  nullable,
  PublicKeyHexSchema,
  SafeUintSchema,
  UnixSecondsSchema,
  withDescription,
} from './common.js';

/**
 * Device callbacks (docs/protocol.md 4.17): the body a validator (or a status proxy) POSTs to a
 * registered device's callback port when its work goes stale, and what GET /devices says about
 * each device's work and callbacks.
 */

const Count = (description: string) => withDescription(SafeUintSchema, description);

export const DeviceCallbackSchema = Type.Object(
  {
    type: Type.Literal('work_stale', {
      description: 'What happened: the work named by challenge_id is stale (the only type so far).',
    }),
    reason: Type.Enum(['block', 'retarget'], {
      type: 'string',
      description:
        "block: another block took the challenge's cell; retarget: the difficulty fell below the challenge's (a new challenge is cheaper).",
    }),
    device: withDescription(PublicKeyHexSchema, 'The device the notification is for: its registered key.'),
    challenge_id: withDescription(IdSchema, 'The stale challenge.'),
    coord: withDescription(CoordSchema, "The challenge's cell."),
    height: Count('The lattice height when the notification was made.'),
    difficulty: Count('The network difficulty now (after the retarget, or at the block).'),
    sent_at: Count('When it was sent: Unix milliseconds by the sender clock.'),
    seq: Count('Counts the notifications of this sender to this device (1, 2, ...).'),
  },
  {
    title: 'DeviceCallback',
    description:
      'POST /tm/notify body, sent to a device: the node key signs utf8("PTM41/notify") || 0x00 || these exact bytes (x-tm-signature).',
  },
);
export type DeviceCallback = Static<typeof DeviceCallbackSchema>;

export const DEVICE_CALLBACK_STATES = ['none', 'idle', 'ok', 'refused', 'failing', 'relayed', 'off'] as const;
export type DeviceCallbackState = (typeof DEVICE_CALLBACK_STATES)[number];

export const DeviceCallbackHealthSchema = Type.Object(
  {
    state: Type.Enum(DEVICE_CALLBACK_STATES, {
      type: 'string',
      description:
        'none: no callback port; idle: a port, nothing sent yet; ok: the last notification was delivered (2xx); refused: the device answered with an error status; failing: it did not answer (back-off); relayed: a status proxy calls it; off: callbacks to its address are not allowed (a public address while the validator allows private ones only, or callbacks disabled).',
    }),
    sent: Count('Notifications sent (attempts).'),
    delivered: Count('Answered with a 2xx status.'),
    refused: Count('Answered with another status.'),
    failed: Count('Not answered in time, or the connection failed.'),
    coalesced: Count('Notifications merged into a later one while one was in flight or backing off.'),
    last_attempt_at: nullable(UnixSecondsSchema, 'When the last notification was sent.'),
    last_delivered_at: nullable(UnixSecondsSchema, 'When a notification was last delivered.'),
    retry_at: nullable(UnixSecondsSchema, 'While backing off: when the next notification may be sent.'),
    last_error: nullable(
      Type.String({ maxLength: 200 }),
      'Why the last notification failed or was refused (a status or a transport error).',
    ),
  },
  { title: 'DeviceCallbackHealth', description: "A device's callbacks, as seen by the node that answers." },
);
export type DeviceCallbackHealth = Static<typeof DeviceCallbackHealthSchema>;

export const DeviceWorkSchema = Type.Object(
  {
    challenge_id: withDescription(IdSchema, 'The last v4.1 challenge issued to the device by this node.'),
    coord: withDescription(CoordSchema, 'Its cell.'),
    difficulty: Count('Its difficulty.'),
    issued_at: withDescription(UnixSecondsSchema, 'When it was issued.'),
    expires_at: withDescription(UnixSecondsSchema, 'When it expires.'),
    stale: Type.Boolean({ description: 'A notification said it went stale (or its cell is taken).' }),
  },
  { title: 'DeviceWork', description: "A device's current work, as seen by the node that answers." },
);
export type DeviceWork = Static<typeof DeviceWorkSchema>;
