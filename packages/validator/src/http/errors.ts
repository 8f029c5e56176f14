import { ApiError } from '@tensormine/service-kit';
import { StorageError } from '../store/errors.js';

// The errors the validator's handlers throw: the service kit's, answered in the one shape.
export { ApiError, verdictError } from '@tensormine/service-kit';

/**
 * The validator's translation of an error before the kit answers it (`translateError`): a
 * database that is busy (a transaction lost every re-run) or unreachable is not a bug. Nothing
 * was written, and the request is answered 503 `service_unavailable`, to be sent again after
 * Retry-After.
 */
export function storageUnavailable(error: Error): Error {
  if (!(error instanceof StorageError)) return error;
  if (error.code !== 'storage_busy' && error.code !== 'storage_unavailable') return error;
  return new ApiError('service_unavailable', `${error.message}; send the request again`, undefined, {
    'retry-after': '1',
  });
}
