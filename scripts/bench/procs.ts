// The processes the bench starts, and their end: every child is tracked and stopped by the bench
// itself, at the end, on failure, and on SIGINT/SIGTERM. Children also get an IPC channel and
// stop when it closes, so not even a killed bench leaves a server behind.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(BENCH_DIR, '..', '..');

const children = new Set<ChildProcess>();
const cleanups: (() => void)[] = [];

export type Child = { proc: ChildProcess; name: string; stderr: () => string };

function track(proc: ChildProcess, name: string): Child {
  children.add(proc);
  proc.once('exit', () => children.delete(proc));
  let tail = '';
  proc.stderr?.on('data', (d: Buffer) => {
    tail = (tail + d.toString('utf8')).slice(-4000);
  });
  return { proc, name, stderr: () => tail };
}

/** A TypeScript module of the bench as a child (node + tsx loader), with IPC. */
export function forkTs(file: string, name: string, env: Record<string, string>, execArgv: string[] = []): Child {
  const proc = fork(path.join(BENCH_DIR, file), [], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    execArgv: ['--import', 'tsx', ...execArgv],
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  return track(proc, name);
}

/** The Node flags of the `start` script (`[exec] node <flags> dist/server/main.js`), so C runs as deployed. */
export function startScriptFlags(): string[] {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
  // `exec` makes the shell npm runs the script with become node (docs/operations.md, stopping).
  const words = pkg.scripts.start.trim().split(/\s+/).filter((w, i) => !(i === 0 && w === 'exec'));
  if (words[0] !== 'node' || words[words.length - 1] !== 'dist/server/main.js') {
    throw new Error(`bench: the start script is not "[exec] node [flags] dist/server/main.js": ${pkg.scripts.start}`);
  }
  return words.slice(1, -1);
}

/**
 * Cairn as deployed: `node <the start script's flags> dist/server/main.js` (what `npm start`
 * runs). Its stdout (the access log, at the configured level) goes to /dev/null; stderr is kept
 * for error reports. The orphan guard is a preload that only watches the IPC channel.
 */
export function spawnCairn(env: Record<string, string>, execArgv: string[] = []): Child {
  const args = [...startScriptFlags(), ...execArgv, '--import', path.join(BENCH_DIR, 'orphan-guard.mjs'), path.join(ROOT, 'dist', 'server', 'main.js')];
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  return track(proc, 'cairn');
}

/** Any other program as a tracked child (no IPC): stdout ignored, stderr kept for error reports. */
export function spawnTracked(command: string, args: string[], name: string, env: Record<string, string> = {}): Child {
  const proc = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  return track(proc, name);
}

/** Waits for the child's first IPC message of the given type (or its exit, which is a failure). */
export function message<T>(child: Child, type: string, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`${child.name}: no "${type}" message within ${timeoutMs} ms\n${child.stderr()}`)), timeoutMs);
    const onMessage = (m: unknown) => {
      if (m && typeof m === 'object' && (m as { type?: string }).type === type) done(null, m as T);
    };
    const onExit = (code: number | null, signal: string | null) =>
      done(new Error(`${child.name} exited (${signal ?? code}) before "${type}"\n${child.stderr()}`));
    function done(err: Error | null, value?: T) {
      clearTimeout(timer);
      child.proc.off('message', onMessage);
      child.proc.off('exit', onExit);
      if (err) reject(err);
      else resolve(value as T);
    }
    child.proc.on('message', onMessage);
    child.proc.once('exit', onExit);
  });
}

/** Waits for a child to exit; resolves with its exit code. */
export function exited(child: Child): Promise<number | null> {
  if (child.proc.exitCode !== null || child.proc.signalCode !== null) return Promise.resolve(child.proc.exitCode);
  return new Promise((resolve) => child.proc.once('exit', (code) => resolve(code)));
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
export async function stop(child: Child, graceMs = 5_000): Promise<void> {
  const p = child.proc;
  if (p.exitCode !== null || p.signalCode !== null) return;
  const gone = exited(child);
  p.kill('SIGTERM');
  const timer = setTimeout(() => p.kill('SIGKILL'), graceMs);
  await gone;
  clearTimeout(timer);
}

export async function stopAll(): Promise<void> {
  await Promise.all([...children].map((p) => stop({ proc: p, name: 'child', stderr: () => '' })));
}

/** Runs at exit (normal or not): removes temp data, after the children are gone. */
export function onCleanup(fn: () => void): void {
  cleanups.push(fn);
}

function killAllNow(): void {
  for (const p of children) {
    try {
      p.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
  children.clear();
  for (const fn of cleanups.splice(0)) {
    try {
      fn();
    } catch {
      /* best effort */
    }
  }
}

let installed = false;
/** Stops every child on exit, on failure and on SIGINT/SIGTERM. Call once at start. */
export function installExitHandlers(): void {
  if (installed) return;
  installed = true;
  process.on('exit', killAllNow);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(sig, () => {
      process.stderr.write(`\nbench: ${sig}, stopping servers\n`);
      void stopAll().finally(() => {
        killAllNow();
        process.exit(130);
      });
    });
  }
}

/** A free loopback port (bound to 0, read, released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** Resident set size of a process now and its peak (Linux /proc; null elsewhere). */
export function rssOf(pid: number | undefined): { rss: number; peak: number } | null {
  if (!pid) return null;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return { rss: kb('VmRSS'), peak: kb('VmHWM') };
  } catch {
    return null;
  }
}

/**
 * Resets a process's peak RSS (VmHWM) to its current RSS (Linux: `5` into /proc/<pid>/clear_refs),
 * so the next `rssOf(pid).peak` is the peak since now. False where that is not possible.
 */
export function resetPeakRss(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Polls `url` until it answers 200; returns the milliseconds since `since` (hrtime ns). */
export async function waitHealthy(url: string, since: bigint, child: Child, timeoutMs = 30_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) {
      throw new Error(`${child.name} exited (${child.proc.signalCode ?? child.proc.exitCode}) before it was healthy\n${child.stderr()}`);
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      await res.arrayBuffer();
      if (res.status === 200) return Number(process.hrtime.bigint() - since) / 1e6;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error(`${child.name}: not healthy within ${timeoutMs} ms\n${child.stderr()}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
