#!/usr/bin/env node
// npm test: the three jest tiers one after the other (unit, integration, system; see jest.config.js),
// each tier's time printed, and a summary at the end. Exits non-zero when any tier failed.
const { spawnSync } = require('node:child_process');

const TIERS = ['unit', 'integration', 'system'];
const results = [];
for (const tier of TIERS) {
  const started = process.hrtime.bigint();
  const run = spawnSync('npm', ['run', `test:${tier}`, '--silent'], { stdio: 'inherit' });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const status = run.status === 0 ? 'passed' : `failed (exit ${run.status ?? run.signal})`;
  results.push({ tier, seconds, status });
  console.log(`\ntest:${tier}: ${status} in ${seconds.toFixed(1)} s\n`);
}
console.log('Tier         Time      Result');
for (const { tier, seconds, status } of results) {
  console.log(`${tier.padEnd(12)} ${`${seconds.toFixed(1)} s`.padStart(8)}  ${status}`);
}
const total = results.reduce((sum, { seconds }) => sum + seconds, 0);
console.log(`${'total'.padEnd(12)} ${`${total.toFixed(1)} s`.padStart(8)}`);
process.exitCode = results.every(({ status }) => status === 'passed') ? 0 : 1;
