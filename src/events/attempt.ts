import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signatureHeader } from './signature.ts';
import { checkWebhookUrl, type Resolver } from './ssrf.ts';

/** An attempt that has no answer within this is a failure (the receiver is retried later). */
export const ATTEMPT_TIMEOUT_MS = 10_000;

export interface AttemptResult {
  /** Delivered: a 2xx answer in time. */
  ok: boolean;
  httpStatus: number | null;
  /** Why it failed (null when delivered). */
  error: string | null;
}

export interface AttemptOptions {
  allowPrivate: boolean;
  resolve?: Resolver;
  timeoutMs?: number;
  /** Unix seconds of the signature. */
  nowSeconds: number;
  userAgent?: string;
}

/**
 * POSTs one event to a webhook URL, signed: the URL is checked again first (its host resolved
 * now, every address public unless allowed), and the connection goes to the address checked.
 * Redirects are not followed (a 3xx is a failure); only the answer's status counts: its body is
 * never read (the connection is closed once the status line is in), and the whole attempt is cut
 * at `timeoutMs`, so a slow or talkative receiver holds nothing.
 */
export async function attemptDelivery(
  url: string,
  secret: string,
  eventId: string,
  body: string,
  options: AttemptOptions,
): Promise<AttemptResult> {
  const checked = await checkWebhookUrl(url, {
    allowPrivate: options.allowPrivate,
    ...(options.resolve ? { resolve: options.resolve } : {}),
  });
  if (!checked.ok) return { ok: false, httpStatus: null, error: `URL refused: ${checked.problem}` };
  const { url: u, address, family } = checked;
  const payload = Buffer.from(body, 'utf8');
  // The connection goes to the address that was checked, whatever the resolver says now.
  const lookup: LookupFunction = (_host, opts, cb) => {
    if ((opts as { all?: boolean }).all) cb(null, [{ address, family }]);
    else cb(null, address, family);
  };
  const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
  const timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    const finish = (r: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(r);
    };
    const req = send(
      u,
      {
        method: 'POST',
        agent: false,
        lookup,
        ...(u.protocol === 'https:' ? { servername: checked.host } : {}),
        headers: {
          'content-type': 'application/json',
          'content-length': String(payload.length),
          'user-agent': options.userAgent ?? 'lrds-webhooks/1',
          [EVENT_ID_HEADER]: eventId,
          [SIGNATURE_HEADER]: signatureHeader(secret, options.nowSeconds, payload),
        },
      },
      (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        res.destroy();
        finish(
          status >= 200 && status < 300
            ? { ok: true, httpStatus: status, error: null }
            : {
                ok: false,
                httpStatus: status,
                error:
                  status >= 300 && status < 400
                    ? `HTTP ${status}: redirects are not followed`
                    : `HTTP ${status}`,
              },
        );
      },
    );
    const timer = setTimeout(
      () => finish({ ok: false, httpStatus: null, error: `no answer within ${timeoutMs / 1000} s` }),
      timeoutMs,
    );
    req.on('error', (err: NodeJS.ErrnoException) =>
      finish({ ok: false, httpStatus: null, error: err.code ? `${err.code}: ${err.message}` : err.message }),
    );
    req.end(payload);
  });
}
