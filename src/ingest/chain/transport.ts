/**
 * JSON-RPC over HTTP within a provider's limits: requests made together go out in batches capped
 * by count and by bytes, at most `requestsPerSecond` HTTP requests a second (a budget shared by
 * every reader of the chain, and held back for a `Retry-After` a provider sends), each with a
 * timeout, and answers read up to a size. A batch the provider refuses as too large (HTTP 413, a
 * JSON-RPC refusal of the batch, an answer over the size) is asked again in halves. Errors are
 * viem's own (HttpRequestError, RpcRequestError, TimeoutError), so viem's retries (429 and 5xx,
 * honouring `Retry-After`, exponential otherwise) and its fallback between several URLs apply as
 * they do to its own HTTP transport.
 */
import {
  custom,
  type EIP1193RequestFn,
  fallback,
  HttpRequestError,
  RpcRequestError,
  TimeoutError,
  type Transport,
} from 'viem';
import { must } from '../../domain/must.ts';

export interface ProviderLimits {
  /** JSON-RPC requests in one HTTP batch, at most (providers cap batches, often at 100 or fewer). */
  batchCalls: number;
  /** Bytes of one HTTP request body, at most (a request larger alone is sent alone). */
  batchBytes: number;
  /** Bytes of one HTTP answer read, at most; a batch answered larger is asked again in halves. */
  responseBytes: number;
  /** HTTP requests a second to one URL, at most; null: no budget. */
  requestsPerSecond: number | null;
  /** Time allowed for one HTTP request, ms. */
  timeoutMs: number;
  /** Retries of a failed request (viem's: 429, 5xx, timeouts; `Retry-After` honoured). */
  retries: number;
}

/** Limits that the common providers accept (request bodies of 1 MB and batches of 50 and up). */
export const DEFAULT_PROVIDER_LIMITS: ProviderLimits = {
  batchCalls: 50,
  batchBytes: 1_000_000,
  responseBytes: 64 * 1024 * 1024,
  requestsPerSecond: null,
  // A node that never answers fails a read after about 10 s x 3 tries, so a pass goes on.
  timeoutMs: 10_000,
  retries: 2,
};

/** What the transport needs of the outside world; tests hand their own clock and sleep. */
export interface TransportHooks {
  fetch?: typeof fetch;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** Called for every HTTP request sent (a batch counts once). */
  onRequest?: () => void;
}

interface Pending {
  body: { jsonrpc: '2.0'; id: number; method: string; params?: unknown };
  bytes: number;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** An answer larger than the limit: the batch is split, a single request fails naming it. */
class AnswerTooLarge extends Error {
  override name = 'AnswerTooLarge';
}

/**
 * A request budget: at most `perSecond` starts a second, evenly spaced, and none before a
 * provider's `Retry-After` has passed.
 */
export class RequestBudget {
  #next = 0;
  #pausedUntil = 0;
  readonly #gapMs: number;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(perSecond: number | null, now: () => number, sleep: (ms: number) => Promise<void>) {
    this.#gapMs = perSecond ? 1000 / perSecond : 0;
    this.#now = now;
    this.#sleep = sleep;
  }

  /** Resolves when the next request may start (after any pause asked for meanwhile, too). */
  async take(): Promise<void> {
    for (;;) {
      const now = this.#now();
      const at = Math.max(now, this.#next, this.#pausedUntil);
      if (at <= now) {
        this.#next = now + this.#gapMs;
        return;
      }
      this.#next = Math.max(this.#next, at);
      await this.#sleep(at - now);
    }
  }

  /** A provider asked for a pause (429 with `Retry-After`): no request starts before it ends. */
  pause(ms: number): void {
    this.#pausedUntil = Math.max(this.#pausedUntil, this.#now() + ms);
  }
}

/** `Retry-After` in ms (seconds or an HTTP date), or null. */
export function retryAfterMs(value: string | null, nowMs: number): number | null {
  if (!value) return null;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - nowMs) : null;
}

/** The longest `Retry-After` waited for; a provider asking for more fails the request (fallback). */
export const MAX_PAUSE_MS = 60_000;

/** A JSON-RPC refusal of a whole batch for its size or count (the provider's words). */
const BATCH_REFUSED =
  /batch (size|limit)|too many (requests|calls) in (the )?batch|not a valid request object|request (entity|body|payload) too large|exceeds? .*(limit|size)/i;

/** One URL's transport, within `limits`. */
export function limitedHttp(url: string, limits: ProviderLimits, hooks: TransportHooks = {}): Transport {
  const doFetch = hooks.fetch ?? fetch;
  const now = hooks.now ?? Date.now;
  const sleep = hooks.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const budget = new RequestBudget(limits.requestsPerSecond, now, sleep);
  let nextId = 1;
  let queue: Pending[] = [];
  let scheduled = false;

  /**
   * Splits what was asked in one turn into batches within the count and byte limits. An
   * `eth_getLogs` goes alone: its answer may be large and slow to come, and in a batch with
   * others (the protocols' log walks of a first sync move in step) one request's timeout would
   * fail them all, and again when they are asked again together.
   */
  function flush(): void {
    scheduled = false;
    const pending = queue;
    queue = [];
    let batch: Pending[] = [];
    let bytes = 2;
    for (const p of pending) {
      if (p.body.method === 'eth_getLogs') {
        void send([p]);
        continue;
      }
      if (
        batch.length > 0 &&
        (batch.length >= limits.batchCalls || bytes + p.bytes + 1 > limits.batchBytes)
      ) {
        void send(batch);
        batch = [];
        bytes = 2;
      }
      batch.push(p);
      bytes += p.bytes + 1;
    }
    if (batch.length > 0) void send(batch);
  }

  async function send(batch: Pending[]): Promise<void> {
    try {
      const answers = await post(batch);
      for (const p of batch) {
        const a = answers.get(p.body.id);
        if (!a)
          p.reject(
            new RpcRequestError({
              body: p.body,
              error: { code: -32603, message: 'no answer in the batch' },
              url,
            }),
          );
        else if (a.error) p.reject(new RpcRequestError({ body: p.body, error: a.error, url }));
        else p.resolve(a.result);
      }
    } catch (err) {
      if (batch.length > 1 && isBatchTooLarge(err)) {
        const half = Math.ceil(batch.length / 2);
        await Promise.all([send(batch.slice(0, half)), send(batch.slice(half))]);
        return;
      }
      const error =
        err instanceof AnswerTooLarge
          ? new RpcRequestError({
              body: must(batch[0], 'request of the batch').body,
              error: { code: -32000, message: `response size exceeded ${limits.responseBytes} bytes` },
              url,
            })
          : err;
      for (const p of batch) p.reject(error);
    }
  }

  /** One HTTP request of `batch`; its answers by id. Throws viem's errors or AnswerTooLarge. */
  async function post(
    batch: Pending[],
  ): Promise<Map<number, { result?: unknown; error?: { code: number; message: string; data?: unknown } }>> {
    await budget.take();
    hooks.onRequest?.();
    // A batch of one is sent as a single request (not a batch).
    const lone = batch.length === 1 ? batch[0] : undefined;
    const single = lone !== undefined;
    const body = lone ? lone.body : batch.map((p) => p.body);
    const text = JSON.stringify(body);
    let res: Response;
    try {
      res = await doFetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: text,
        signal: AbortSignal.timeout(limits.timeoutMs),
      });
    } catch (err) {
      if ((err as Error)?.name === 'TimeoutError') throw new TimeoutError({ body: body as never, url });
      throw new HttpRequestError({
        body: body as never,
        cause: err as Error,
        details: (err as Error).message,
        url,
      });
    }
    if (!res.ok) {
      const details = await readCapped(res, 4096).catch(() => '');
      // A provider's Retry-After (on a 429 or a 503) holds back every request to this URL, up to
      // MAX_PAUSE_MS: a longer one fails the request instead, so a fallback URL is tried.
      const wait = retryAfterMs(res.headers.get('retry-after'), now());
      if (wait !== null && wait <= MAX_PAUSE_MS) budget.pause(wait);
      if (wait !== null && wait > MAX_PAUSE_MS)
        throw new RpcRequestError({
          body: body as never,
          error: {
            code: -32000,
            message: `the provider asks to wait ${Math.round(wait / 1000)} s (Retry-After)`,
          },
          url,
        });
      throw new HttpRequestError({
        body: body as never,
        details: details.slice(0, 200) || res.statusText,
        headers: res.headers,
        status: res.status,
        url,
      });
    }
    const raw = await readCapped(res, limits.responseBytes);
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw new HttpRequestError({
        body: body as never,
        details: `not JSON: ${raw.slice(0, 100)}`,
        status: res.status,
        url,
      });
    }
    const answers = new Map<
      number,
      { result?: unknown; error?: { code: number; message: string; data?: unknown } }
    >();
    const list = Array.isArray(parsed) ? parsed : [parsed];
    // A batch refused as a whole: one error object without the requests' ids.
    if (!single && !Array.isArray(parsed)) {
      const error = (parsed as { error?: { code: number; message: string } }).error;
      throw new RpcRequestError({
        body: body as never,
        error: error ?? { code: -32603, message: 'batch refused' },
        url,
      });
    }
    for (const a of list as { id: number; result?: unknown; error?: { code: number; message: string } }[]) {
      if (a && typeof a === 'object') answers.set(lone ? lone.body.id : a.id, a);
    }
    return answers;
  }

  /** The answer's text, read up to `cap` bytes (AnswerTooLarge past it: the rest is not read). */
  async function readCapped(res: Response, cap: number): Promise<string> {
    const declared = Number(res.headers.get('content-length'));
    if (declared > cap) {
      await res.body?.cancel();
      throw new AnswerTooLarge();
    }
    if (!res.body) return '';
    const reader = res.body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > cap) {
        await reader.cancel();
        throw new AnswerTooLarge();
      }
      chunks.push(value);
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  function isBatchTooLarge(err: unknown): boolean {
    if (err instanceof AnswerTooLarge) return true;
    if (err instanceof HttpRequestError && err.status === 413) return true;
    return err instanceof RpcRequestError && BATCH_REFUSED.test(err.details ?? err.message);
  }

  const request = (({ method, params }: { method: string; params?: unknown }) =>
    new Promise<unknown>((resolve, reject) => {
      const body = {
        jsonrpc: '2.0' as const,
        id: nextId++,
        method,
        ...(params === undefined ? {} : { params }),
      };
      queue.push({ body, bytes: Buffer.byteLength(JSON.stringify(body)), resolve, reject });
      if (!scheduled) {
        scheduled = true;
        setTimeout(flush, 0);
      }
    })) as EIP1193RequestFn;

  return custom(
    { request },
    {
      key: 'limitedHttp',
      name: 'JSON-RPC within provider limits',
      retryCount: limits.retries,
      retryDelay: 250,
    },
  );
}

/**
 * A chain's transport over one URL or several: with several, viem's fallback moves to the next
 * URL when one fails (after its retries) and comes back to the first when it answers again.
 */
export function providerTransport(
  urls: readonly string[],
  limits: ProviderLimits,
  hooks: TransportHooks = {},
): Transport {
  const transports = urls.map((url) => limitedHttp(url, limits, hooks));
  const [first] = transports;
  if (first !== undefined && transports.length === 1) return first;
  return fallback(transports, { retryCount: 0 });
}
