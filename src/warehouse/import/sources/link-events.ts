import { columnsByTable } from '../../ddl';
import { sqlLiteral } from '../../sql';
import { deriveLinkViews, LINK_VIEW_COUNTS, OPEN_WINDOW_SECONDS } from '../../derive/link-views';
import { addressSql, csvFormat, FIRST_TIME, LAST_TIME, ndjsonFormat, outsideTimesSql, parquetFormat, timeSql } from '../formats';
import type { Accessors, ImportOptions, Lines, Source } from '../source';

/**
 * The link pages' own events, into link_events, and the link views derived
 * from them (the three Links cubes): each a view of a link's page or an
 * open (the viewer chose an app on it). The fields, and what each derived
 * column of link_views is made of, are in docs/bringing-data.md.
 */
export const LINK_EVENT_FIELDS = ['time', 'account', 'link', 'event', 'viewer', 'ip', 'userAgent', 'url', 'referer', 'acceptLanguage', 'target'];

/** The checked rows' columns: link_events' own but the ids, which the table's defaults give. */
const CHECKED = columnsByTable()
  .find((t) => t.table === 'link_events')!
  .columns.filter((c) => !c.startsWith('import_id') && !c.startsWith('event_id'));

/** Each row's fields, checked: a time, an account, a link, the kind of event, an address; an open names what it opened. */
function checkSql(lines: Lines, a: Accessors, options: ImportOptions): string {
  // In JSON an absent field may be written null.
  const text = (f: string) => (a.json ? `if(${a.raw(f)} = 'null', '', ${a.text(f)})` : a.text(f));
  // As for requests: a row's own account stands, and with --account too it must be that one.
  const fileAccount = sqlLiteral(options.account ?? '');
  const otherAccount = options.account ? `row_account NOT IN ('', ${fileAccount})` : 'false';
  return `
    SELECT line, ${a.line} AS line_text, ${a.columns ? `${a.columns},` : ''}
      ${text('time')} AS time_text,
      ${timeSql('time_text', 'optional')} AS time64,
      ifNull(time64, toDateTime64(0, 3, 'UTC')) AS ts,
      ${text('account')} AS row_account,
      if(row_account != '', row_account, ${fileAccount}) AS account_id,
      ${text('link')} AS link,
      ${text('event')} AS event,
      ${text('viewer')} AS viewer,
      ${addressSql(text('ip'))},
      ${text('userAgent')} AS raw_ua,
      ${text('url')} AS url,
      ${text('referer')} AS referer,
      ${text('acceptLanguage')} AS accept_language,
      ${text('target')} AS target,
      ${options.ignoreUnknown ? 'CAST([] AS Array(String))' : a.unknown} AS unknown,
      multiIf(
        NOT (${a.isRecord}), ${sqlLiteral(a.notARecord)},
        length(unknown) > 0, concat('unknown field ', unknown[1], ' (--ignore-unknown skips unknown fields)'),
        time_text = '', 'time is missing',
        time64 IS NULL OR ${outsideTimesSql('time64')}, 'time is not a time from ${FIRST_TIME} to ${LAST_TIME} (ISO 8601; without a zone, UTC)',
        account_id = '', 'no account: give the row an account field or the file --account',
        ${otherAccount}, concat('account ', row_account, ' differs from --account ', ${fileAccount}),
        link = '', 'link is missing',
        event NOT IN ('view', 'open'), 'event is not view or open',
        NOT isIPv4String(ip_text) AND NOT isIPv6String(ip_text), concat('ip is not an IPv4 or IPv6 address: ', ip_text),
        event = 'open' AND target = '', 'an open without target (the app or service opened)',
        '') AS reason, '' AS skip
    FROM ${lines.from}`;
}

export const LINK_EVENTS: Source = {
  name: 'link-events',
  row: { one: 'event', many: 'events' },
  formats: { ndjson: ndjsonFormat(LINK_EVENT_FIELDS), csv: csvFormat(LINK_EVENT_FIELDS), parquet: parquetFormat(LINK_EVENT_FIELDS) },
  fields: LINK_EVENT_FIELDS,
  rowAccounts: true,
  target: 'link_events',
  time: 'ts',
  checked: CHECKED,
  check: checkSql,
  async stage({ id, checked }) {
    return {
      rows: `SELECT account_id, ts, event, link, viewer, ip, raw_ua, url, referer, accept_language, target, ${sqlLiteral(id)} AS import_id
        FROM ${checked} WHERE reason = ''`,
    };
  },
  // An event is all its fields: a copy, in another file or the same one, is the same event (its id names its time too).
  duplicates: { id: 'event_id', within: 'id', fields: 'cityHash64(event_id)' },
  counts: LINK_VIEW_COUNTS,
  derivesBefore: OPEN_WINDOW_SECONDS,
  async derive({ client, options, from, to, accounts, id, progress }) {
    progress('deriving link views');
    return deriveLinkViews(client, options.database, options.derivation, { from, to, accounts, importId: id, budget: options.statementRows });
  },
  async undo({ client, options, from, to, accounts }) {
    await deriveLinkViews(client, options.database, options.derivation, { from, to, accounts, removed: true, budget: options.statementRows });
  },
};
