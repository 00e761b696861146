import { format, stripVTControlCharacters } from 'node:util';
import type { LogLevel } from './config';

/** One JSON object per line on stdout, so log shippers need no parsing rules. */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function createLogger(level: LogLevel, write: (line: string) => void = (line) => process.stdout.write(line)): Logger {
  const emit =
    (at: LogLevel) =>
    (msg: string, fields: Record<string, unknown> = {}) => {
      if (RANK[at] < RANK[level]) return;
      write(`${JSON.stringify({ time: new Date().toISOString(), level: at, msg, ...fields })}\n`);
    };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}

/**
 * What libraries print with console.* becomes log lines, so that stdout stays
 * one JSON object per line: Cube prints its advice ("Warning. …") and its
 * compiler's warnings with console.log. Lines matching `inapplicable` are
 * logged at debug: advice known not to apply to this service.
 */
export function routeConsole(logger: Logger, inapplicable: readonly RegExp[] = []): void {
  const route =
    (level: LogLevel) =>
    (...args: unknown[]) => {
      // Cube colours its "Warning." with ANSI escapes meant for a terminal.
      const text = stripVTControlCharacters(format(...args)).trim();
      if (text === '') return;
      const at = inapplicable.some((pattern) => pattern.test(text)) ? 'debug' : level === 'info' && /^warning\b/i.test(text) ? 'warn' : level;
      logger[at]('library output', { text });
    };
  /* eslint-disable no-console -- the one place console output is taken over */
  console.log = route('info');
  console.info = route('info');
  console.debug = route('debug');
  console.warn = route('warn');
  console.error = route('error');
  /* eslint-enable no-console */
}
