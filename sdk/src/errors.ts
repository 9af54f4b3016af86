import type { components } from './schema.ts';

/** An error answer of the API: `{ error, message, ...details }`. */
export type ErrorBody = components['schemas']['Error'];
/** The API's closed set of error codes (the `error` field). */
export type ErrorCode = ErrorBody['error'];

/** Base class of the errors this SDK throws for an answer that is not a success. */
export class LrdsError extends Error {
  /** HTTP status of the last answer. */
  readonly status: number;
  /** Requests made, retries included. */
  readonly attempts: number;
  /** `X-Request-Id` of the last answer, to quote to support; null when absent. */
  readonly requestId: string | null;

  constructor(message: string, status: number, attempts: number, requestId: string | null) {
    super(message);
    this.name = 'LrdsError';
    this.status = status;
    this.attempts = attempts;
    this.requestId = requestId;
  }
}

/**
 * An error answer of the API, typed by its code: narrow with `isApiError(err, 'INVALID_PARAMETER')`
 * or by comparing `err.code`.
 */
export class LrdsApiError<C extends ErrorCode = ErrorCode> extends LrdsError {
  readonly code: C;
  /** The whole error body: `details` for INVALID_PARAMETER, `limit` and `used` for quotas, … */
  readonly body: ErrorBody & { error: C };
  /** The wait the server asked for, ms (body `retryAfter`, else `Retry-After`); null when none. */
  readonly retryAfterMs: number | null;

  constructor(
    body: ErrorBody & { error: C },
    status: number,
    attempts: number,
    requestId: string | null,
    retryAfterMs: number | null,
  ) {
    super(`${body.error} (${status}): ${body.message}`, status, attempts, requestId);
    this.name = 'LrdsApiError';
    this.code = body.error;
    this.body = body;
    this.retryAfterMs = retryAfterMs;
  }
}

/** An answer that is neither a success nor an error of the API (e.g. a proxy's 502 page). */
export class LrdsResponseError extends LrdsError {
  /** The body as text (at most the first 1,000 characters). */
  readonly bodyText: string;

  constructor(status: number, bodyText: string, attempts: number, requestId: string | null) {
    super(`unexpected answer ${status}: ${bodyText.slice(0, 200)}`, status, attempts, requestId);
    this.name = 'LrdsResponseError';
    this.bodyText = bodyText.slice(0, 1000);
  }
}

/** Whether `err` is an error answer of the API, with the code given (any code when omitted). */
export function isApiError<C extends ErrorCode = ErrorCode>(err: unknown, code?: C): err is LrdsApiError<C> {
  return err instanceof LrdsApiError && (code === undefined || err.code === code);
}
