import { ProtocolError } from '../src/errors.js';

/** Runs `fn` and returns the ProtocolError it throws; fails the test if it throws nothing else. */
export function thrown(fn: () => unknown): ProtocolError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ProtocolError) return error;
    throw error;
  }
  throw new Error('expected a ProtocolError');
}
