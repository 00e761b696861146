// Podcast listeners who go on to visit the podcast's website and convert
// there. A JS file: the steps' SQL is put together from the parts below.
// access: account (a key reads its own account's rows only)
//
// The funnel, as docs/reference/api.md ("The funnel") states it:
// - A listener is one of an account's listeners as its downloads count them
//   (IAB 5.5.4, listenerIpSql in src/warehouse/derive/rules.ts): an IPv4
//   address, or an IPv6 address's first 64 bits (LISTENER below).
// - The query's range is its conditions on `time`: a dateRange, a filter
//   (inDateRange, afterDate, …), or filters of it in and/or groups
//   (SQL_UTILS.timeCondition, src/cube/engine/dialect.ts); all time without
//   one. A listener enters at their first download within the range, and
//   `time` is that instant: each of their steps is counted in that bucket.
// - Website Visit: their first visit (a web event of a kind FUNNEL_VISIT
//   names, page views by default) at or after the entry, from the same
//   listener (an IPv4 address, or an IPv6 address in the same /64), when it
//   is at most 7 days after it.
// - Conversion: their first conversion (a web event of a kind
//   FUNNEL_CONVERSION names, structured events of category `conversion` by
//   default) at or after that visit, when it is at most 7 days after the
//   visit.
// So no step counts more listeners than the one before it, in any bucket.
// The kinds are the service's settings (src/config.ts), which the engine
// hands the model as SQL_UTILS.funnelStep (src/cube/funnel-steps.ts).
//
// Every table read is the caller's account only, like the cubes over these
// tables (see "Accounts" in docs/reference/security.md), and its rows within their
// retention (SQL_UTILS.retained, docs/guides/operating.md "Retention"). The
// listener is the account and address together, so an operator key's funnel
// never joins one account's listener to another account's website.

// The step names, as `step` gives them.
const STEPS = ['Podcast Download', 'Website Visit', 'Conversion'];
const TIME = 'WebEventsFromPodcastFunnel.time';
const WITHIN = 'INTERVAL 7 DAY';

// A listener (see listenerIpSql), of a download or a web event alike: an
// IPv4 address as its IPv4-mapped IPv6 address, an IPv6 address as its /64.
// A web event without an address (ip `::`, or ip4 0.0.0.0 and ip as its
// mapping) is `::`, no listener.
const LISTENER = 'if(ip4 = toIPv4(0), IPv6CIDRToRange(ip, 64).1, toIPv6(ip4))';
// The listener as the text WebEvents joins on (its `account_id/ip4`).
const LISTENER_ID = "concat(account_id, '/', if(ip4 = toIPv4(0), IPv6NumToString(listener), IPv4NumToString(ip4)))";

// ClickHouse's ASOF JOIN takes, for each listener, the first web event at or
// after the time on the left. Without one, an ASOF LEFT JOIN leaves the
// right time NULL (join_use_nulls, which Cube's driver sets) or at its
// default (1970): either way not `followed`.
const followed = (later, earlier) => `ifNull(${later} >= ${earlier} AND ${later} <= ${earlier} + ${WITHIN}, 0)`;

const stepsSql = (SECURITY_CONTEXT, SQL_UTILS) => {
  const account = SECURITY_CONTEXT.accountId.filter('account_id');
  // Web events before the range cannot follow an entry in it.
  const webEvents = (step) =>
    `SELECT account_id, ${LISTENER} AS listener, track_ts AS at FROM web_events
      WHERE ${SQL_UTILS.funnelStep(step)} AND listener != toIPv6('::') AND ${account} AND ${SQL_UTILS.timeLowerBound(TIME, 'track_ts')}
        AND ${SQL_UTILS.retained('web_events')}`;
  return `SELECT
  if(reached >= step.2, ${LISTENER_ID}, NULL) AS user_id,
  if(reached >= step.2, 1, NULL) AS reached_step,
  ${LISTENER_ID} AS listener_id,
  step.1 AS step_name,
  entered AS t
FROM (
  SELECT r.account_id AS account_id, r.listener AS listener, r.ip4 AS ip4, r.entered AS entered,
    1 + r.visited_in_time + (r.visited_in_time AND ${followed('c.at', 'r.visited')}) AS reached
  FROM (
    SELECT e.account_id AS account_id, e.listener AS listener, e.ip4 AS ip4, e.entered AS entered, v.at AS visited,
      ${followed('v.at', 'e.entered')} AS visited_in_time
    FROM (
      SELECT account_id, listener, any(ip4) AS ip4, min(ts) AS entered
      FROM (SELECT account_id, ts, ip4, ${LISTENER} AS listener FROM downloads WHERE ${account} AND ${SQL_UTILS.timeCondition(TIME, 'ts')} AND ${SQL_UTILS.retained('downloads')})
      GROUP BY account_id, listener
    ) AS e
    ASOF LEFT JOIN (${webEvents('visit')}) AS v ON e.account_id = v.account_id AND e.listener = v.listener AND v.at >= e.entered
  ) AS r
  ASOF LEFT JOIN (${webEvents('conversion')}) AS c ON r.account_id = c.account_id AND r.listener = c.listener AND c.at >= r.visited
)
ARRAY JOIN [${STEPS.map((name, i) => `('${name}', ${i + 1})`).join(', ')}] AS step`;
};

// Built outside the cube() call on purpose: Cube's model transpiler turns
// every identifier inside an inline `sql` function into a member reference,
// so the functions above could not be called there. Nothing here is
// transpiled, so every `sql` is written as a function, as the transpiler
// would have made it.
const definition = {
  title: 'Web Events from Podcast Funnel',
  // One row per listener and step, reached or not, at the listener's entry:
  // user_id is set where they reached the step (WebEvents joins on it).
  sql: (SECURITY_CONTEXT, SQL_UTILS) => stepsSql(SECURITY_CONTEXT, SQL_UTILS),

  measures: {
    conversions: {
      description:
        'Number of listeners (per account: an IPv4 address, or an IPv6 /64) that reached the step: entered at their first download within the range, visited within 7 days, converted within 7 days of that visit.',
      sql: () => 'reached_step',
      type: 'count',
    },
    // conversionsPercent's divisor, the first step's conversions in the same
    // group of the answer, is rows ÷ steps: every listener who entered has one
    // row in each step, so a group's rows are its listeners once for each step
    // it holds (one when grouped or filtered by step). Cheaper than a distinct
    // count of listeners, which cost as much as the funnel itself.
    steps: {
      description: 'Number of steps among the rows (conversionsPercent).',
      sql: () => 'step_name',
      type: 'countDistinct',
      shown: false,
    },
    rows: {
      description: 'Number of rows, one per listener and step (conversionsPercent).',
      type: 'count',
      shown: false,
    },
    conversionsPercent: {
      description: 'conversions of the step ÷ conversions of the first step × 100.',
      sql: (conversions, steps, rows) => `CASE WHEN ${rows} > 0 THEN 100.0 * ${conversions} * ${steps} / ${rows} ELSE NULL END`,
      type: 'number',
      format: 'percent',
      // The service refuses it beside another cube's members (src/cube/engine/dialect.ts).
      meta: {
        notAcrossJoins:
          "it divides by the first step's listeners, which other cubes' rows cannot be joined to; ask for conversions by step with those members and divide by the first step's.",
      },
    },
  },

  dimensions: {
    id: {
      description: 'A row: its listener and step.',
      sql: () => "concat(listener_id, '/', step_name)",
      type: 'string',
      primaryKey: true,
    },
    time: {
      description: "The listener's entry: their first download within the query's range (all time without one).",
      sql: () => 't',
      type: 'time',
    },
    step: {
      description: `The step: ${STEPS.join(', ')}.`,
      sql: () => 'step_name',
      type: 'string',
    },
  },
};

cube('WebEventsFromPodcastFunnel', definition);
