/**
 * The formats an export is written in, each by ClickHouse itself: the
 * service passes the engine's bytes on and writes none of a file's contents,
 * but for ndjson's closing line.
 */
export interface ExportFormat {
  name: 'csv' | 'ndjson' | 'parquet';
  /** ClickHouse's output format. */
  clickhouse: string;
  contentType: string;
  /** Media types an Accept header may ask for it by. */
  accepts: string[];
  extension: string;
  /** The format's ClickHouse settings. */
  settings: Record<string, string | number>;
  /**
   * How rows are told apart in the engine's bytes, so the service can stop
   * after the last whole row under a cap; parquet's cannot be cut.
   */
  records: 'lines' | 'csv' | 'none';
}

/**
 * Rows in each block the engine hands out for a csv or ndjson export.
 * chDB's stream hands out one block's bytes per chunk, and the service holds
 * a chunk whole (the spool keeps one larger than its 4 MiB window in
 * memory): at ClickHouse's 65,409 rows an ndjson chunk of raw requests was
 * 22.6 MB, at 8,192 it is 2.9 MB, and Node's buffers no longer grow with the
 * answer, at no cost in rows/s measured (docs/benchmarks.md, "Exports").
 * parquet's rows go to a file, not the spool, and measured no better.
 */
export const EXPORT_BLOCK_ROWS = 8192;

/** Rows in each row group of a parquet export (see the format's settings). */
export const PARQUET_ROW_GROUP_ROWS = 65536;

/**
 * Settings of every export statement that reads Cube's SQL on chDB, whose
 * memory is the service's own process's. A query ungrouped reads in the
 * table's order, merging a stream per part, and ClickHouse buffers each
 * stream's blocks before that merge (BufferChunks, for parallelism): about
 * 135 MiB of the engine's memory for one account's raw requests, at 150,000
 * rows as at 600,000; about 70 MiB without it, as fast (docs/benchmarks.md,
 * "Exports"). A ClickHouse server's memory is not the service's, and a
 * server older than the setting would refuse the statement.
 */
export const IN_PROCESS_READ_SETTINGS: Readonly<Record<string, number>> = { read_in_order_use_buffering: 0 };

export const FORMATS: readonly ExportFormat[] = [
  {
    name: 'csv',
    // RFC 4180: a header row, CRLF line ends, fields quoted when they need it; numbers stay bare.
    clickhouse: 'CSVWithNames',
    contentType: 'text/csv; charset=utf-8; header=present',
    accepts: ['text/csv'],
    extension: 'csv',
    settings: { output_format_csv_crlf_end_of_line: 1, format_csv_null_representation: '', max_block_size: EXPORT_BLOCK_ROWS },
    records: 'csv',
  },
  {
    name: 'ndjson',
    clickhouse: 'JSONEachRow',
    contentType: 'application/x-ndjson; charset=utf-8',
    accepts: ['application/x-ndjson', 'application/ndjson', 'application/jsonl'],
    extension: 'ndjson',
    // Numbers as JSON numbers (ClickHouse quotes 64-bit integers by default): as in the CSV.
    settings: { output_format_json_quote_64bit_integers: 0, output_format_json_quote_decimals: 0, max_block_size: EXPORT_BLOCK_ROWS },
    records: 'lines',
  },
  {
    name: 'parquet',
    clickhouse: 'Parquet',
    contentType: 'application/vnd.apache.parquet',
    accepts: ['application/vnd.apache.parquet', 'application/x-parquet'],
    extension: 'parquet',
    // The writer holds a whole row group until it writes it, by default up to 1,000,000 rows (all of a 600,000-row
    // raw export, about 100 MiB of the engine's memory); smaller groups bound it.
    settings: { output_format_parquet_row_group_size: PARQUET_ROW_GROUP_ROWS },
    records: 'none',
  },
];

export const FORMAT_NAMES = FORMATS.map((f) => f.name);

export function formatNamed(name: string): ExportFormat | undefined {
  return FORMATS.find((f) => f.name === name);
}
