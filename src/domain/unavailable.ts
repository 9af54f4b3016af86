/**
 * A backend an answer depends on (the store, the limiter) is unreachable: the request gets 503,
 * never a guess. Defined below every layer that throws or catches it (store, access, http, mcp).
 */
export class BackendUnavailableError extends Error {
  override name = 'BackendUnavailableError';
}
