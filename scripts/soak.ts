// `npm run soak`: the long forms of the reliability suite (issue 18; test/reliability/). Runs the
// same test files as `npm test` with CAIRN_SOAK=1, which raises their sizes:
//   crash harness 20 SIGKILL cycles, fuzzer 200,000 requests, 200-way concurrency,
//   load 60 s at LOAD_RATE (default 200/s), more slow-loris / idle / stalled clients.
// Any of FUZZ_REQUESTS, CRASH_CYCLES, LOAD_SECONDS, LOAD_RATE in the environment overrides.
// It prints the figures and appends them, with date, commit and machine, to docs/reliability.md
// (`--no-record` to skip).
import { spawn, execFileSync } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const record = !process.argv.includes('--no-record');
const started = new Date();
const load0 = loadavg()[0]!;

const child = spawn(path.join(root, 'node_modules', '.bin', 'vitest'), ['run', 'test/reliability/', '--reporter=default'], {
  cwd: root,
  env: { ...process.env, CAIRN_SOAK: '1' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let out = '';
child.stdout.on('data', (d: Buffer) => {
  process.stdout.write(d);
  out += d.toString();
});
const code: number = await new Promise((resolve) => child.on('exit', (c) => resolve(c ?? 1)));

// eslint-disable-next-line no-control-regex
const plain = out.replace(/\x1b\[[0-9;]*m/g, '');
const figures = plain.split('\n').filter((l) => /^(fuzz:|oauth fuzz:|crash harness:|load:|1000 concurrent)/.test(l.trim())).map((l) => l.trim());
const minutes = ((Date.now() - started.getTime()) / 60_000).toFixed(1);
const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root }).toString().trim();
const dirty = execFileSync('git', ['status', '--porcelain'], { cwd: root }).toString().trim() ? ' (uncommitted changes)' : '';
const entry = [
  '',
  `### Soak ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC, commit ${commit}${dirty}: ${code === 0 ? 'passed' : 'FAILED'}`,
  '',
  `Machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), load average ${load0.toFixed(1)} at start (shared), Node ${process.version}; ${minutes} min.`,
  '',
  ...figures.map((f) => `- ${f}`),
  '',
].join('\n');
console.log(entry);
if (record) appendFileSync(path.join(root, 'docs', 'reliability.md'), entry);
process.exit(code);
