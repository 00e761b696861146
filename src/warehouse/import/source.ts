import type { ClickHouseClient } from '@clickhouse/client';
import type { TableName } from '../ddl';
import type { Derivation } from '../derive/rederive';

/**
 * What a source of rows is: everything the import (import.ts) needs to take a
 * file of it, as a declaration. The import itself is shared: it hashes the
 * file, reads it with the format's reader (lines.ts), checks every row by the
 * source's SQL, writes the rejects, stages the valid rows in the target's own
 * layout, drops rows already stored (by their own ids), attaches the staged
 * parts to the target whole or not at all, and hands the new rows to the
 * source's derivation. A new source is a file in sources/ exporting one of
 * these, listed in sources/index.ts.
 */
export interface Source {
  /** What `--source` names it. */
  name: string;
  /** What a row is called in messages and summaries, one and many: `request`, `requests`. */
  row: { one: string; many: string };
  /** Its formats by the name `--format` gives them; the first is the default. */
  formats: Readonly<Record<string, Format>>;
  /** The canonical record's field names (JSON keys, CSV header names, Parquet columns). */
  fields: readonly string[];
  /**
   * Whether a row may name its account (the `account` field): then --account is for the rows that do not. A
   * source whose rows cannot needs --account for every file, unless they are public.
   */
  rowAccounts: boolean;
  /**
   * Its rows are public, nobody's (chart positions): its tables have no account_id, a file takes no --account, and an
   * import changes every account's answers.
   */
  public?: boolean;
  /**
   * Canonical fields a file may leave to the command, one value for all its rows (`--<field> VALUE`: a chart's
   * `--country`); the check reads them from ImportOptions.given.
   */
  given?: readonly string[];
  /** The table its valid rows go to. It has an `import_id String` column, which marks the import a row came with. */
  target: TableName;
  /**
   * Further tables some of its rows go to instead (an episode chart's positions), each with an `import_id` column and
   * the time column; Staged.more gives their rows. The duplicate check reads the target only.
   */
  more?: readonly TableName[];
  /** The target's time column: the span an import covers, and the hours its duplicate check reads. */
  time: string;
  /**
   * Rows that stand for a whole (a chart snapshot): SQL over its tables' columns that names the whole a row belongs to
   * (`tuple(platform, …, snapshot_ts)`). An import's rows replace the rows stored before of every whole it brings:
   * a corrected snapshot delivered again replaces the earlier one, never doubles it.
   */
  replaces?: string;
  /** The checked rows' columns (`name Type`), beside `line`, `raw`, `reason` and `skip`, which every source has. */
  checked: readonly string[];
  /**
   * The checked rows of a run of lines, as a SELECT of `line`, `line_text` (the line as the reject file shows it),
   * `reason` (the first reason the row cannot be imported, '' when it can), `skip` (for a valid row the source does
   * not store, what it is, counted in the summary's `skipped`; else '') and the `checked` columns.
   */
  check(lines: Lines, a: Accessors, options: ImportOptions): string;
  /** How the valid rows are staged in the target's layout (made once per import, before the lines are read). */
  stage(staging: Staging): Promise<Staged>;
  /** Rows that carry their own id, by which a second delivery of one is recognised; absent: only the file is. */
  duplicates?: Duplicates;
  /**
   * After the rows are in the target: what follows from them (downloads from requests). Returns counts for the
   * summary, named in `counts` (0 in the summary of a file that added nothing).
   */
  derive?(change: Change): Promise<Record<string, number>>;
  counts?: readonly string[];
  /** How long before its first row (seconds) what it derives may change (a link view an open marks); absent: nothing before. */
  derivesBefore?: number;
  /** After an interrupted import's rows were taken out of the target again: what followed from them, undone. */
  undo?(change: Change): Promise<void>;
}

/** A format of a source: which reader takes the file, and how a row's fields are read from what it gives. */
export interface Format {
  /**
   * `lines`: each line's text (`raw`); `csv`: a header line naming the fields, then a record a line, each field a
   * column; `parquet`: the fields as columns of text (Nullable(String): absent is NULL); `json`: each JSON document's
   * text (`raw`: the file's one object, or each object of a top-level array), its number in the file as `line`.
   */
  reader: 'lines' | 'csv' | 'parquet' | 'json';
  /** Lines that start with it hold no row (CloudFront's `#` header lines). */
  comment?: string;
  /** What the file says before its rows that the accessors need (a CSV header's names); read once. */
  header?(source: string, name: string): Promise<string[]>;
  accessors(header: string[]): Accessors;
}

/** How a source's check reads a field of a row, whatever the format, and what the reject file shows of it. */
export interface Accessors {
  /** Columns (`expr AS name`) the others read, computed once per row; '' when there are none. */
  columns: string;
  /** The field's text ('' when absent). */
  text(field: string): string;
  /** The field's JSON token in a JSON format (a number stays unquoted, '' when absent); its text in the others. */
  raw(field: string): string;
  /** Whether the row has the field. */
  has(field: string): string;
  /** Whether `raw` gives JSON tokens. */
  json: boolean;
  /** The row's field names that are none of the source's (Array(String)). */
  unknown: string;
  /** Whether the line is a record of the format at all, and the reason when it is not. */
  isRecord: string;
  notARecord: string;
  /** The row's text in the reject file. */
  line: string;
  /** The row's number in the reject file, when it is not the reader's line (an entry's position in a JSON document's list). */
  position?: string;
}

/**
 * Where a check reads a run of a file's rows: `from` yields `line` (its number in the file, or the row's in a
 * Parquet file) and what the format's reader gives (Format.reader).
 */
export interface Lines {
  /** Which lines, for progress messages. */
  name: string;
  from: string;
  /**
   * The reader's settings, as the statement's SETTINGS clause: chDB's client
   * turns `clickhouse_settings` into SET statements that outlive the
   * statement.
   */
  settings?: string;
}

/** What a source's stage hook is given: the import's staging database, id and options. */
export interface Staging {
  client: ClickHouseClient;
  options: ImportOptions;
  /** The import's id, which every staged row carries as its import_id. */
  id: string;
  /** The checked rows (a Null table the views read). */
  checked: string;
  /** A staging table or view of this import, by kind (quoted, with its database); dropped when the import ends. */
  table(kind: string): string;
  /** The same table's name as joinGet takes it (`database.table`, unquoted). */
  joinName(kind: string): string;
}

export interface Staged {
  /** Tables its views write to, made before them: kind → what follows `CREATE TABLE <name>`. */
  tables?: Record<string, string>;
  /** The valid rows (`reason = ''`, `skip = ''`) in the target's layout, column for column: a SELECT over the checked rows. */
  rows: string;
  /** The rows of each of Source.more, the same way in its layout. */
  more?: Partial<Record<TableName, string>>;
  /** More views over the checked rows, made after the rows' view: kind → `TO <table kind> AS SELECT …`. */
  views?: { kind: string; to: string; select: string }[];
}

/**
 * A row's own id (a column of the target): a staged row whose id is stored already for the same account (in the same
 * UTC day, where the id does not name the time), or on another line of the same file, adds nothing.
 */
export interface Duplicates {
  id: string;
  /** Rows that carry an id (SQL over the target's columns); absent: all do. */
  identified?: string;
  /** Which rows are copies of a row: `id`, those of its id (which names the row's time too); `day`, those of its id and UTC day. */
  within: 'id' | 'day';
  /** Of the copies in one file, the one whose fields hash least is kept: those fields (SQL over the target's columns). */
  fields: string;
}

/** What derive and undo are given: the rows of one import, added or taken out. */
export interface Change {
  client: ClickHouseClient;
  options: Pick<ImportOptions, 'database' | 'derivation' | 'statementRows'>;
  /** Epoch seconds of the first and last row. */
  from: number;
  to: number;
  accounts: readonly string[];
  /** The import whose rows were added (its rows' import_id), for counts of its own rows; absent when they were taken out. */
  id?: string;
  progress(message: string): void;
}

export interface ImportOptions {
  database: string;
  /** The source's name (sources/index.ts); absent: requests. */
  source?: string;
  /** One of the source's formats. */
  format: string;
  /** For rows without an `account` field. */
  account?: string;
  /** Values of the source's `given` fields for rows that lack them (a chart's `--country`), by field. */
  given?: Record<string, string>;
  maxBadRows: number;
  ignoreUnknown: boolean;
  /** Request URLs must start with it, then the show's token, '/', and the media host and path. */
  trackingPrefix: string;
  /** Where `<name>.rejects.ndjson` goes. */
  rejectsDir: string;
  /** The warehouse's rules of what is derived from rows: user agents, places, downloads. */
  derivation: Derivation;
  /** The file's name in summaries, rejects and the imports table, when it is read from a copy (stdin, the service's inbox). */
  name?: string;
  /**
   * The engine runs in this process (chDB), so it reads the file with
   * `file()`; a server is sent the file's lines instead.
   */
  engineReadsFiles: boolean;
  /**
   * Rows one statement takes at most: the file is validated in runs of this
   * many lines, and what a source derives in parts of about this many rows,
   * so that other statements (on chDB, which runs one at a time, the
   * service's queries) go between. Absent: the file in one statement,
   * derivation in runs of days (rederive's CHUNK_REQUESTS).
   */
  statementRows?: number;
  progress?: (message: string) => void;
}

/** A file refused as a whole before any row is read (e.g. an unknown CSV column). */
export class ImportRefused extends Error {}
