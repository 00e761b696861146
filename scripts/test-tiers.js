#!/usr/bin/env node
// npm test: the three jest tiers one after the other (unit, integration, system; see jest.config.js),
// each tier's time printed, and a summary at the end. Exits non-zero when any tier failed.
const { spawnSync } = require('node:child_process');
const { mkdtempSync, readFileSync, rmSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const reports = mkdtempSync(path.join(os.tmpdir(), 'test-tiers-'));

/** The tier's slowest files, with when each started after the first: where the next cut of the tier's time is. */
function slowestFiles(tier, count = 5) {
  let report;
  try {
    report = JSON.parse(readFileSync(path.join(reports, `${tier}.json`), 'utf8'));
  } catch {
    return '';
  }
  const files = report.testResults.map((f) => ({ name: path.relative(process.cwd(), f.name), start: f.startTime, seconds: (f.endTime - f.startTime) / 1000 }));
  const first = Math.min(...files.map((f) => f.start));
  const lines = files
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, count)
    .map((f) => `  ${`${f.seconds.toFixed(1)} s`.padStart(8)}  started at ${`${((f.start - first) / 1000).toFixed(0)} s`.padStart(6)}  ${f.name}`);
  return `slowest files:\n${lines.join('\n')}\n`;
}

const TIERS = ['unit', 'integration', 'system'];
const results = [];
for (const tier of TIERS) {
  const started = process.hrtime.bigint();
  const run = spawnSync('npm', ['run', `test:${tier}`, '--silent', '--', '--json', '--outputFile', path.join(reports, `${tier}.json`)], {
    stdio: 'inherit',
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const status = run.status === 0 ? 'passed' : `failed (${run.status === null ? run.signal : `exit ${run.status}`})`;
  results.push({ tier, seconds, status });
  console.log(`\ntest:${tier}: ${status} in ${seconds.toFixed(1)} s`);
  console.log(slowestFiles(tier));
}
console.log('Tier         Time      Result');
for (const { tier, seconds, status } of results) {
  console.log(`${tier.padEnd(12)} ${`${seconds.toFixed(1)} s`.padStart(8)}  ${status}`);
}
const total = results.reduce((sum, { seconds }) => sum + seconds, 0);
console.log(`${'total'.padEnd(12)} ${`${total.toFixed(1)} s`.padStart(8)}`);
rmSync(reports, { recursive: true, force: true });
process.exitCode = results.every(({ status }) => status === 'passed') ? 0 : 1;
