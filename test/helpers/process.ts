// The real server as a child process (tsx server/main.ts, or with `built: true` what `npm start`
// runs: node with the start script's flags on dist/server/main.js) on a DATA_DIR, for tests that
// kill it, restart it or read what it prints. Loopback only.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { freePort } from './ports.js';
import path from 'node:path';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

export const root = path.resolve(import.meta.dirname, '..', '..');
export const tsx = path.join(root, 'node_modules', '.bin', 'tsx');

export type ServerProcess = {
  url: string;
  port: number;
  child: ChildProcess;
  /** Everything printed so far (stdout and stderr). */
  output: () => string;
  /** Resolves with the exit code and signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop: () => Promise<void>;
};

let built = false;
/**
 * `npm start`'s command: `prestart` (scripts/build-if-stale.mjs: compiles only when a source is
 * newer than dist, ~25 s when it does) once per test process, then the start script's node flags
 * on dist/server/main.js. Only one test file uses it (the load test), so two builds never race.
 */
export function startCommand(): string[] {
  if (!built) {
    execFileSync(process.execPath, [path.join(root, 'scripts', 'build-if-stale.mjs')], { cwd: root, timeout: 180_000 });
    built = true;
  }
  const start = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const m = /^(?:exec )?node((?: --\S+)*) (dist\/server\/main\.js)$/.exec(start);
  if (!m) throw new Error(`unexpected start script: ${start}`);
  return [...m[1]!.trim().split(' ').filter(Boolean), m[2]!];
}

/** Starts the server and resolves once it logs that it listens. */
export async function startServerProcess(dataDir: string, env: Record<string, string> = {}, opts: { built?: boolean } = {}): Promise<ServerProcess> {
  const port = await freePort();
  const [cmd, args] = opts.built ? [process.execPath, startCommand()] : [tsx, ['server/main.ts']];
  const child = spawn(cmd, args, {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, CAIRN_SCRYPT_LOG_N: '14', LOG_LEVEL: 'info', CAIRN_RATE_LIMIT_FACTOR: '1000', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`the server did not start: ${out}`)), 30_000);
    const check = () => {
      if (/cairn \S+ listening on /.test(out)) {
        clearTimeout(t);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    void exited.then(() => {
      clearTimeout(t);
      reject(new Error(`the server exited while starting: ${out}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    child,
    output: () => out,
    exited,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        // The server's own process (tsx's child) is looked up first: should tsx end without it,
        // it is ended here rather than left running on the test's DATA_DIR.
        const pid = serverPid({ child });
        child.kill('SIGTERM');
        await exited;
        try {
          if (pid !== child.pid) process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone, as it should be.
        }
      }
    },
  };
}

/**
 * The pid of the node process that runs the server (tsx starts it as its child; a built server is
 * the child itself): the one to
 * SIGKILL for a crash (killing tsx would leave it running) and to read /proc/<pid> of.
 */
export function serverPid(s: Pick<ServerProcess, 'child'>): number {
  let pid = s.child.pid!;
  for (;;) {
    let children: string[] = [];
    try {
      children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    } catch {
      return pid;
    }
    if (!children.length) return pid;
    pid = Number(children[0]);
  }
}

/** Resident set size (bytes), open file descriptors, and how many of them are sockets, from /proc. */
export function processStats(pid: number): { rss: number; fds: number; sockets: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rss = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
  const fds = readdirSync(`/proc/${pid}/fd`);
  let sockets = 0;
  for (const fd of fds) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) sockets++;
    } catch {
      /* closed meanwhile */
    }
  }
  return { rss, fds: fds.length, sockets };
}
