import type { Run } from './http-load';

/** Percentiles and the number formats every table of the benchmark uses. */

export interface Stats {
  p50: number;
  p95: number;
  p99: number;
  max: number;
  perSecond: number;
}

export function stats(run: Run): Stats {
  const sorted = [...run.latencies].sort((a, b) => a - b);
  // Nearest rank: the smallest latency at or above which the given share of requests fall.
  const at = (p: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]);
  return {
    p50: at(50),
    p95: at(95),
    p99: at(99),
    max: sorted.length === 0 ? NaN : sorted[sorted.length - 1],
    perSecond: run.latencies.length / (run.elapsedMs / 1000),
  };
}

export const ms = (value: number) => (Number.isNaN(value) ? '-' : Math.abs(value) < 10 ? value.toFixed(1) : value.toFixed(0));
export const signedMs = (value: number) => (Number.isNaN(value) ? '-' : `${value >= 0 ? '+' : ''}${ms(value)}`);
export const mb = (bytes: number | undefined) => (bytes === undefined ? '-' : (bytes / 1024 / 1024).toFixed(0));
export const perSecond = (value: number) => (Number.isNaN(value) ? '-' : value.toFixed(0));
export const log = (line: string) => process.stdout.write(`${line}\n`);

export function table(header: string[], align: ('l' | 'r')[], rows: string[][]): string {
  return [`| ${header.join(' | ')} |`, `|${align.map((a) => (a === 'r' ? '--:' : '---')).join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}
