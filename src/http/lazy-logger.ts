import type { FastifyBaseLogger } from 'fastify';

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
const noop = () => {};

/** Whether a logger writes lines of `level` (pino's isLevelEnabled; true for loggers without it). */
export function writes(logger: FastifyBaseLogger, level: string): boolean {
  const l = logger as FastifyBaseLogger & { isLevelEnabled?: (level: string) => boolean };
  return l.isLevelEnabled ? l.isLevelEnabled(level) : true;
}

/**
 * A request's logger that becomes a pino child (with the request's bindings) only when a line
 * is written at a level the root logger writes. At LOG_LEVEL=warn and above, where a request
 * that goes well logs nothing, making a child per request (and another once the key is known)
 * was a tenth of the CPU of a small answer; lines that are written carry the same bindings.
 */
export function lazyChild(
  parent: () => FastifyBaseLogger,
  root: FastifyBaseLogger,
  bindings: Record<string, unknown>,
  options?: Record<string, unknown>,
): FastifyBaseLogger {
  let real: FastifyBaseLogger | undefined;
  const get = () => {
    real ??= parent().child(bindings, options);
    return real;
  };
  const lazy = {
    child: (b: Record<string, unknown>, o?: Record<string, unknown>) =>
      real ? real.child(b, o) : lazyChild(get, root, b, o),
    isLevelEnabled: (level: string) => writes(root, level),
    silent: noop,
    get level() {
      return real ? real.level : root.level;
    },
    set level(value: string) {
      get().level = value;
    },
  } as unknown as FastifyBaseLogger & Record<string, unknown>;
  for (const level of LEVELS)
    lazy[level] = writes(root, level)
      ? (...args: unknown[]) => (get()[level] as (...a: unknown[]) => void)(...args)
      : noop;
  return lazy;
}
