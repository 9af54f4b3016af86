import http from 'node:http';
import net from 'node:net';

/** A TCP port free on 127.0.0.1 at the time of the call. */
export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

/**
 * One request as a client sees it: when it was sent and answered (performance.now()), the
 * status (0 when no answer came) and the error code of a 4xx/5xx body, or the transport error
 * (marked " (reused socket)" when it happened on a kept-alive connection).
 */
export interface Answer {
  sent: number;
  answered: number;
  status: number;
  error?: string;
  /** The error's message, for an error answer. */
  message?: string;
}

/** GET with a bearer key over `agent`; never rejects. */
export function getAnswer(agent: http.Agent, port: number, path: string, key: string): Promise<Answer> {
  const sent = performance.now();
  return new Promise((resolve) => {
    const req = http.get(
      { agent, host: '127.0.0.1', port, path, headers: { authorization: `Bearer ${key}` } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const answered = performance.now();
          const status = res.statusCode ?? 0;
          let error: string | undefined;
          let message: string | undefined;
          if (status >= 400) {
            try {
              ({ error, message } = JSON.parse(Buffer.concat(chunks).toString()));
            } catch {
              error = 'unparsable';
            }
          }
          resolve(
            error === undefined
              ? { sent, answered, status }
              : { sent, answered, status, error, ...(message === undefined ? {} : { message }) },
          );
        });
        res.on('error', (e) =>
          resolve({
            sent,
            answered: performance.now(),
            status: 0,
            error: (e as NodeJS.ErrnoException).code ?? e.message,
          }),
        );
      },
    );
    req.on('error', (e) =>
      resolve({
        sent,
        answered: performance.now(),
        status: 0,
        error: `${(e as NodeJS.ErrnoException).code ?? e.message}${req.reusedSocket ? ' (reused socket)' : ''}`,
      }),
    );
  });
}

/**
 * The tightest span a client can prove holds `rate + 1` admitted answers: the server admitted
 * each somewhere between its send and its answer, so for each answer i (by send time), the
 * (rate + 1)-th earliest answer among those sent at or after it, minus i's send. Under 1,000 ms
 * means rate + 1 admissions inside one second: a violation.
 */
export function tightestSpan(admitted: readonly { sent: number; answered: number }[], rate: number): number {
  const bySent = [...admitted].sort((a, b) => a.sent - b.sent);
  let tightest = Number.POSITIVE_INFINITY;
  for (let i = 0; i + rate < bySent.length; i++) {
    const answered = bySent
      .slice(i)
      .map((a) => a.answered)
      .sort((a, b) => a - b);
    tightest = Math.min(tightest, answered[rate]! - bySent[i]!.sent);
  }
  return tightest;
}
