/**
 * The one error vocabulary of the API (docs/decisions.md "Errors"): a closed set of codes, one status each.
 * Bodies are `{ error, message, ...extra }`, never wrapped in the envelope.
 */
export const ERROR_STATUS = {
  INVALID_PARAMETER: 400,
  UNAUTHORIZED: 401,
  TIER_FORBIDDEN: 403,
  CHAIN_FORBIDDEN: 403,
  KEY_LIMIT_REACHED: 403,
  WEBHOOK_LIMIT_REACHED: 403,
  NOT_FOUND: 404,
  MARKET_NOT_FOUND: 404,
  TOKEN_NOT_FOUND: 404,
  ORACLE_NOT_FOUND: 404,
  VAULT_NOT_FOUND: 404,
  REPORT_NOT_FOUND: 404,
  KEY_NOT_FOUND: 404,
  WEBHOOK_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  IDEMPOTENCY_KEY_IN_USE: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  IDEMPOTENCY_KEY_REUSED: 422,
  HEADERS_TOO_LARGE: 431,
  RATE_LIMIT_EXCEEDED: 429,
  DAILY_QUOTA_EXCEEDED: 429,
  MONTHLY_QUOTA_EXCEEDED: 429,
  KEY_CREATION_RATE_EXCEEDED: 429,
  STREAM_LIMIT_REACHED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

export interface ParameterProblem {
  parameter: string;
  problem: string;
}

/** An expected, client-facing failure. Anything else thrown is a bug and becomes INTERNAL_ERROR. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    message: string,
    extra: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.extra = extra;
    this.headers = headers;
  }

  body(): Record<string, unknown> {
    return { error: this.code, message: this.message, ...this.extra };
  }
}

export function invalidParameter(details: ParameterProblem[]): ApiError {
  const first = details[0];
  const message =
    details.length === 1 && first
      ? `Invalid parameter '${first.parameter}': ${first.problem}`
      : `Invalid parameters: ${details.map((d) => `'${d.parameter}' ${d.problem}`).join('; ')}`;
  return new ApiError('INVALID_PARAMETER', message, { details });
}

export function unauthorized(): ApiError {
  // One message for every failure: never reveals whether a key exists or was revoked.
  return new ApiError(
    'UNAUTHORIZED',
    'A valid API key is required: send it as "Authorization: Bearer <API_KEY>".',
    {},
    { 'www-authenticate': 'Bearer' },
  );
}
