#!/usr/bin/env node
// Records chDB's engine packages for the platforms this registry mirror does
// not serve (darwin, linux-arm64) in package-lock.json, as npm records them
// when it can reach them: version, os, cpu, optional. Without these entries
// `npm ci` refuses the lockfile ("Missing: @chdb/lib-darwin-arm64 from lock
// file"); with them it skips them on other platforms, as it should.
// Run after regenerating package-lock.json from scratch:  node scripts/lockfile-platforms.js
const fs = require('node:fs');
const path = require('node:path');

const lockPath = path.join(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(lockPath, 'utf8'));
const platforms = {
  '@chdb/lib-darwin-arm64': { os: ['darwin'], cpu: ['arm64'] },
  '@chdb/lib-darwin-x64': { os: ['darwin'], cpu: ['x64'] },
  '@chdb/lib-linux-arm64-gnu': { os: ['linux'], cpu: ['arm64'], libc: ['glibc'] },
};
const wanted = lock.packages['node_modules/chdb'].optionalDependencies;
for (const [name, { os, cpu, libc }] of Object.entries(platforms)) {
  const key = `node_modules/${name}`;
  if (lock.packages[key]) continue;
  lock.packages[key] = { version: wanted[name], cpu, ...(libc ? { libc } : {}), license: 'Apache-2.0', optional: true, os };
}
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)));
fs.writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
