/**
 * What a query refuses, in terms any caller can map to its own answer (the HTTP API maps these
 * to 400 INVALID_PARAMETER and 404 MARKET_NOT_FOUND, TOKEN_NOT_FOUND, ORACLE_NOT_FOUND, VAULT_NOT_FOUND, REPORT_NOT_FOUND; the MCP tools likewise).
 */
export class QueryError extends Error {
  readonly code:
    | 'INVALID_PARAMETER'
    | 'MARKET_NOT_FOUND'
    | 'TOKEN_NOT_FOUND'
    | 'ORACLE_NOT_FOUND'
    | 'VAULT_NOT_FOUND'
    | 'REPORT_NOT_FOUND';
  /** For INVALID_PARAMETER: the parameter and what is wrong with it. */
  readonly detail: { parameter: string; problem: string } | undefined;

  private constructor(
    code: QueryError['code'],
    message: string,
    detail?: { parameter: string; problem: string },
  ) {
    super(message);
    this.code = code;
    this.detail = detail;
  }

  static invalid(parameter: string, problem: string): QueryError {
    return new QueryError('INVALID_PARAMETER', `${parameter} ${problem}`, { parameter, problem });
  }

  static marketNotFound(key: string): QueryError {
    return new QueryError('MARKET_NOT_FOUND', `No market '${key}'.`);
  }

  /** No token, oracle or vault at that address on that chain. */
  static notFound(kind: 'token' | 'oracle' | 'vault', chainId: number, address: string): QueryError {
    const code =
      kind === 'token' ? 'TOKEN_NOT_FOUND' : kind === 'oracle' ? 'ORACLE_NOT_FOUND' : 'VAULT_NOT_FOUND';
    return new QueryError(code, `No ${kind} ${address} on chain ${chainId}.`);
  }

  /** No research report with that id (in the caller's chains). */
  static reportNotFound(id: string): QueryError {
    return new QueryError('REPORT_NOT_FOUND', `No research report '${id.slice(0, 64)}'.`);
  }
}
