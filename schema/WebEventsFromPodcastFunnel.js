// Podcast listeners who go on to visit the podcast's website and convert
// there, matched by IPv4 address (LISTENER below says how IPv6 listeners
// count). Cube's own funnel extension builds the cube; a JS file because
// YAML cannot call it.
// access: account (a key reads its own account's rows only)
const Funnels = require('Funnels');

// Every step reads the caller's account only, like the cubes over these tables
// (see "Accounts" in docs/security.md). The user is the account and address together, so
// an operator key's funnel never joins one account's listener to another
// account's website.
//
// Every step also skips rows older than the query's earliest time
// (SQL_UTILS.timeLowerBound, src/cube/engine/dialect.ts). That changes no answer: a
// row's `time` is the latest download time among its user's joined events,
// so a download before the bound can only matter to rows the query's own
// filter drops, and visits and conversions join only at or after the
// download they follow. Without it every query joins all of an account's
// downloads ever made. (The range's end cannot be pushed down: a later
// download moves a user's `time` out of the range.) The service's remake of
// an account's hours after an import relies on it too: it asks for the
// addresses' rows from the import's first day on, which then read the rows
// from that day on only.
const since = (SQL_UTILS, column) => SQL_UTILS.timeLowerBound('WebEventsFromPodcastFunnel.time', column);

// The hourly funnel the service keeps per account (src/cube/funnel-hourly.ts):
// `funnel_hourly` holds each account's conversions by step and hour, counted
// from `funnel_address` (each address's hour per step), made by this cube's
// own SQL (its hidden `userId` by step and hour); `funnel_built` lists the
// accounts it holds, with the row counts it was made from; `funnel_complete` says whether every account
// the service started with is there. A rollup's build reads the hours of the
// accounts it holds, and this cube's steps for the others only while it is
// not complete (the first look after start-up on data without hours): then
// its scalar is 0 and ClickHouse reads no row for that branch.
const HOURLY = 'funnel_hourly';
const BUILT = 'funnel_built';
const COMPLETE = 'funnel_complete';
const notHourly = (SQL_UTILS) =>
  SQL_UTILS.rollupBuild()
    ? `(SELECT argMax(complete, at) FROM ${SQL_UTILS.rollupSource(COMPLETE)}) = 0 AND account_id NOT IN (SELECT account_id FROM ${SQL_UTILS.rollupSource(BUILT)})`
    : '1 = 1';

// The step names as the funnel writes them in `step` (its titleize leaves these as they are).
const STEP_NAMES = ['Podcast Download', 'Website Visit', 'Conversion'];
const FIRST_STEP = STEP_NAMES[0];

// A listener's address: its IPv4 address, or for one who downloaded over
// IPv6 (ip4 0.0.0.0) the IPv6 address itself. Keyed by ip4 alone, every IPv6
// listener of an account was one address of the first step. Web events hold
// IPv4 addresses only, so an IPv6 listener is counted but never matched.
const LISTENER = 'if(ip4 = toIPv4(0), IPv6NumToString(ip), toString(ip4))';

const funnel = Funnels.eventFunnel({
  userId: { sql: () => "concat(account_id, '/', address)" },
  time: { sql: () => 'ts' },
  steps: [
    {
      name: STEP_NAMES[0],
      eventsView: {
        sql: (SECURITY_CONTEXT, SQL_UTILS) =>
          `SELECT account_id, ${LISTENER} AS address, ts FROM downloads WHERE ${SECURITY_CONTEXT.accountId.filter('account_id')} AND ${since(SQL_UTILS, 'ts')} AND ${notHourly(SQL_UTILS)}`,
      },
    },
    {
      name: STEP_NAMES[1],
      eventsView: {
        sql: (SECURITY_CONTEXT, SQL_UTILS) =>
          `SELECT account_id, toString(ip4) AS address, track_ts AS ts FROM web_events WHERE se_category = '' AND ${SECURITY_CONTEXT.accountId.filter('account_id')} AND ${since(SQL_UTILS, 'track_ts')} AND ${notHourly(SQL_UTILS)}`,
      },
      timeToConvert: '7 day',
    },
    {
      name: STEP_NAMES[2],
      eventsView: {
        sql: (SECURITY_CONTEXT, SQL_UTILS) =>
          `SELECT account_id, toString(ip4) AS address, track_ts AS ts FROM web_events WHERE se_category = 'conversion' AND ${SECURITY_CONTEXT.accountId.filter('account_id')} AND ${since(SQL_UTILS, 'track_ts')} AND ${notHourly(SQL_UTILS)}`,
      },
      timeToConvert: '7 day',
    },
  ],
});

// Built outside the cube() call on purpose: Cube's model transpiler turns
// every identifier inside an inline `sql` function into a member reference,
// so the fix below could not call `funnel` there. Nothing here is
// transpiled, so every `sql` is written as a function, as the transpiler
// would have made it.
const definition = {
  extends: () => funnel,
  title: 'Web Events from Podcast Funnel',

  // The funnel selects the first step's time as `podcast_download_events.t`
  // without an alias. With three joined steps, ClickHouse's analyzer (25.x,
  // 26.x) names that column "podcast_download_events.t", and the funnel's
  // outer `SELECT … t` fails with UNKNOWN_IDENTIFIER. Naming it `t` is the
  // whole fix; the funnel tests compare every step with hand-written SQL.
  //
  // And each address's first-step row is repeated once in every later step,
  // with no user id (so `conversions` does not count it) and the address in
  // `first_step_counted`, which firstStepConversions counts. The funnel
  // counted, as a step's denominator, the first-step addresses among that
  // step's own rows: their time there is the latest download that led (or
  // did not lead) to the step, not the address's first-step time, so under a
  // date range a step divided by another number than the first step's
  // conversions (345 / 8675 answered 3.80 %, not 3.98 %). Now every step
  // divides by the addresses whose first-step time the query keeps: the
  // first step's conversions in the same answer.
  //
  // A rollup's build reads the service's hourly table for the accounts it
  // holds: an hour's conversions as that many rows with a user id, which
  // `conversions` (a count, as the spec has it) counts as the steps' rows.
  sql: (SQL_UTILS, SECURITY_CONTEXT) => {
    const steps = `SELECT reached AS user_id, first_step_user_id, at_step AS step, t, first_step_counted FROM (
  SELECT if(at_step = step, user_id, NULL) AS reached, first_step_user_id, at_step, t,
    if(step = '${FIRST_STEP}', first_step_user_id, NULL) AS first_step_counted
  FROM (${funnel.sql().replace(/\bpodcast_download_events\.t\n/, 'podcast_download_events.t AS t\n')}) AS funnel_steps
  ARRAY JOIN if(step = '${FIRST_STEP}', [${STEP_NAMES.map((name) => `'${name}'`).join(', ')}], [step]) AS at_step
)`;
    if (!SQL_UTILS.rollupBuild()) return steps;
    return `SELECT CAST(account_id AS Nullable(String)) AS user_id, CAST(NULL AS Nullable(String)) AS first_step_user_id, toString(step) AS step, hour AS t,
  CAST(NULL AS Nullable(String)) AS first_step_counted
FROM ${SQL_UTILS.rollupSource(HOURLY)} ARRAY JOIN range(conversions) AS conversion
WHERE ${SECURITY_CONTEXT.accountId.filter('account_id')} AND account_id IN (SELECT account_id FROM ${SQL_UTILS.rollupSource(BUILT)})
UNION ALL ${steps}`;
  },

  // The dashboard's funnel (conversions by step over whole hours, days or
  // weeks) joins downloads to visits and conversions per address: seconds at
  // 100M downloads, and no ClickHouse projection can serve a join. This
  // rollup stores that answer per hour and step; `conversions` is a count,
  // so hours add up. Cube builds it per account (the account filter is in
  // the steps' SQL, so each account's table differs) in the database
  // CUBE_ROLLUP_DATABASE, through the writing client (src/cube/engine/driver.ts).
  //
  // One table per account, not partitions: a row's time is its address's
  // latest download, so a rollup row for any week depends on every later
  // download and a partition's build joins everything from its start to
  // now (the steps can be bounded below only, see `since`): N partitions
  // cost about N/2 full builds, where one table costs one. And Cube 0.33
  // cuts the last partition a query builds at that query's range end and
  // keeps the cut table (docs/benchmarks.md, "The funnel: a Cube rollup").
  //
  // Rebuilding a table from the steps reads its accounts' whole history (the
  // operator's: every account's), since any added row can move an address's
  // hour. So the service keeps the funnel by account and hour in a table of
  // its own (src/cube/funnel-hourly.ts), remade for the accounts an import
  // touched only, and for those from the import's first day on only (each
  // address's older hour is kept per address), and a rollup's build reads that (an account's hours, or
  // every account's: the operator's funnel is the sum of the accounts',
  // the user being the account and address together) instead of the steps,
  // except for accounts it does not hold yet. The refresh key is the
  // hourly table's state for the context (how many times its accounts' hours
  // were made, and when last), checked every 10 s: the service remakes an
  // account's hours when its rows changed (an import at once, rows added by
  // other means at its next look, 10 s), so a build follows new rows. It
  // does not count the rows themselves: a key that turned on a row before
  // the hours did would build a table from the hours before it, then again.
  preAggregations: {
    conversionsByStep: {
      type: 'rollup',
      external: false,
      measures: (conversions) => [conversions],
      dimensions: (step) => [step],
      timeDimension: (time) => time,
      granularity: 'hour',
      refreshKey: {
        every: '10 second',
        sql: (SECURITY_CONTEXT, SQL_UTILS) =>
          `SELECT concat(toString(count()), '/', toString(max(built))) FROM ${SQL_UTILS.rollupSource(BUILT)} WHERE ${SECURITY_CONTEXT.accountId.filter('account_id')}`,
      },
      indexes: { byStep: { columns: (step) => [step] } },
    },
  },

  // The extension's measures, as it defines them, with the descriptions it lacks.
  measures: {
    conversions: {
      description: 'Number of listener addresses (per account: the IPv4 address, or the IPv6 one of a listener without) that reached the step.',
      sql: () => 'user_id',
      type: 'count',
    },
    firstStepConversions: {
      description: 'Number of listener addresses (per account, as in conversions) that downloaded: the first step, which conversionsPercent divides by.',
      sql: () => 'first_step_counted',
      type: 'countDistinct',
      shown: false,
    },
    conversionsPercent: {
      description: 'conversions of the step ÷ conversions of the first step × 100.',
      sql: (conversions, firstStepConversions) => `CASE WHEN ${firstStepConversions} > 0 THEN 100.0 * ${conversions} / ${firstStepConversions} ELSE NULL END`,
      type: 'number',
      format: 'percent',
      // The service refuses it beside another cube's members (src/cube/engine/dialect.ts).
      meta: {
        notAcrossJoins:
          "it divides by the first step's addresses, which other cubes' rows cannot be joined to; ask for conversions by step with those members and divide by the first step's.",
      },
    },
  },
};

cube('WebEventsFromPodcastFunnel', definition);
