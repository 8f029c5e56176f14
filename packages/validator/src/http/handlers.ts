import type { OperationId } from '@tensormine/protocol';
import type { Handler } from './routes.js';

/**
 * Types a group of handlers by operationId: each handler's request and reply are those of
 * its route in the protocol's ROUTES table.
 */
export function routeHandlers<
  const T extends { [Id in keyof T]: Id extends OperationId ? Handler<Id> : never },
>(handlers: T): T {
  return handlers;
}
