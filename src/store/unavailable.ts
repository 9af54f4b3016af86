import { BackendUnavailableError } from '../domain/unavailable.ts';

/**
 * The store could not be reached, or did not answer in time: nothing was read, and whether a
 * write took effect is unknown. A BackendUnavailableError, so an HTTP request that needed the
 * store is answered 503 SERVICE_UNAVAILABLE with Retry-After, never 500.
 */
export class StoreUnavailableError extends BackendUnavailableError {
  override name = 'StoreUnavailableError';
}
