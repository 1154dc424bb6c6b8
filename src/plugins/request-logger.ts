import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import type { Bindings, ChildLoggerOptions, Logger } from 'pino';

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
type Level = (typeof LEVELS)[number];
type Write = (...args: unknown[]) => void;

/**
 * A request's logger that becomes a pino child (its bindings serialised) only when a line is
 * written at an enabled level: most requests write none, and then their logger costs one small
 * object (issue 37: logging that costs nothing when not written). It writes exactly what the
 * child it stands for would write.
 */
class RequestLogger {
  // The level methods, set on the prototype below.
  declare fatal: Write;
  declare error: Write;
  declare warn: Write;
  declare info: Write;
  declare debug: Write;
  declare trace: Write;
  private made: Logger | undefined;
  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private real(): Logger {
    this.made ??= this.parent.child(this.bindings, this.options);
    return this.made;
  }

  write(level: Level, args: unknown[]): void {
    // A child's own level (set through `level` below) decides once it exists; before, its parent's.
    if ((this.made ?? this.parent).isLevelEnabled(level)) (this.real()[level] as (...a: unknown[]) => void)(...args);
  }

  silent(): void {}

  get level(): string {
    return (this.made ?? this.parent).level;
  }
  set level(level: string) {
    this.real().level = level;
  }
  isLevelEnabled(level: string): boolean {
    return (this.made ?? this.parent).isLevelEnabled(level);
  }
  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.real().child(bindings, options);
  }
}

// One method per level, on the prototype (nothing made per request).
for (const level of LEVELS) {
  RequestLogger.prototype[level] = function (this: RequestLogger, ...args: unknown[]) {
    this.write(level, args);
  };
}

/** Fastify's per-request logger factory: a RequestLogger for the child Fastify would make. */
export const lazyRequestLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, options) =>
  new RequestLogger(logger as unknown as Logger, bindings, options) as unknown as FastifyBaseLogger;
