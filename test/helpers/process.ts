// The real server as a child process (tsx server/main.ts) on a DATA_DIR, for tests that kill it,
// restart it or read what it prints. Loopback only.
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from './ports.js';
import path from 'node:path';

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

/** Starts the server and resolves once it logs that it listens. */
export async function startServerProcess(dataDir: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(tsx, ['server/main.ts'], {
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
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}
