import type { FastifyBaseLogger } from 'fastify';

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;

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
 * Its methods are on the prototype and ask the root whether it writes a level only when a line
 * comes: making one costs an object, not a closure per level (3.4 us a request with the key's
 * child, most of it asking the six levels up front).
 */
export function lazyChild(
  parent: () => FastifyBaseLogger,
  root: FastifyBaseLogger,
  bindings: Record<string, unknown>,
  options?: Record<string, unknown>,
): FastifyBaseLogger {
  return new LazyLogger(parent, root, bindings, options) as unknown as FastifyBaseLogger;
}

class LazyLogger {
  readonly #parent: () => FastifyBaseLogger;
  readonly #root: FastifyBaseLogger;
  readonly #bindings: Record<string, unknown>;
  readonly #options: Record<string, unknown> | undefined;
  #real: FastifyBaseLogger | undefined;

  constructor(
    parent: () => FastifyBaseLogger,
    root: FastifyBaseLogger,
    bindings: Record<string, unknown>,
    options: Record<string, unknown> | undefined,
  ) {
    this.#parent = parent;
    this.#root = root;
    this.#bindings = bindings;
    this.#options = options;
  }

  #get = (): FastifyBaseLogger => {
    this.#real ??= this.#parent().child(this.#bindings, this.#options);
    return this.#real;
  };

  #line(level: (typeof LEVELS)[number], args: unknown[]): void {
    if (writes(this.#root, level)) (this.#get()[level] as (...a: unknown[]) => void)(...args);
  }

  child(b: Record<string, unknown>, o?: Record<string, unknown>): FastifyBaseLogger {
    return this.#real ? this.#real.child(b, o) : lazyChild(this.#get, this.#root, b, o);
  }

  isLevelEnabled(level: string): boolean {
    return writes(this.#root, level);
  }

  silent(): void {}

  get level(): string {
    return this.#real ? this.#real.level : this.#root.level;
  }

  set level(value: string) {
    this.#get().level = value;
  }

  trace(...args: unknown[]): void {
    this.#line('trace', args);
  }
  debug(...args: unknown[]): void {
    this.#line('debug', args);
  }
  info(...args: unknown[]): void {
    this.#line('info', args);
  }
  warn(...args: unknown[]): void {
    this.#line('warn', args);
  }
  error(...args: unknown[]): void {
    this.#line('error', args);
  }
  fatal(...args: unknown[]): void {
    this.#line('fatal', args);
  }
}
