#!/usr/bin/env node
// `cairn`: the server for supervisors (systemd, containers; docs/operations.md). This process
// becomes the server, so the SIGTERM a supervisor sends reaches it directly (issue 13 item 3).
// In a source checkout it first compiles what changed (as `npm start` does); an installed
// package ships dist/ already built (prepack).
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const builder = path.join(root, 'scripts', 'build-if-stale.mjs');
if (existsSync(builder) && existsSync(path.join(root, 'server', 'main.ts'))) {
  const r = spawnSync(process.execPath, [builder], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
await import('../dist/server/main.js');
