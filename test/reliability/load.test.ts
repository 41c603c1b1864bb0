// Issue 18.6: load and leaks. The real server process, built and started as `npm start` runs it,
// under a fixed request rate (open loop: a
// request starts every 1/rate s whether or not earlier ones finished) over a realistic mix of
// four users: reads (a to-do, a page of the list), writes (create, patch, complete/reopen), views
// (today, anytime, upcoming) and search. After a warm-up, every answer must be a success; p50/p99
// are printed (docs/reliability.md records them); the server's RSS and open file descriptors
// (/proc/<pid>; sockets counted apart, as they follow the client's connections) averaged over
// the first and the last window: RSS grows by at most 10% (12 MiB for a server under 120 MiB),
// descriptors differ by at most 10%.
// `npm test`: LOAD_SECONDS=10 at LOAD_RATE=60/s after 3 s; `npm run soak`: 60 s at 200/s after a
// 30 s warm-up (the machine is shared: set LOAD_RATE near the bench's capacity on a quiet one).
// Why the warm-up, and the proof that the RSS measure catches a 2 KB-per-request leak
// (LOAD_INJECT_LEAK=2048 CAIRN_SOAK=1 must fail): docs/reliability.md, "What the RSS measure means".
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Agent, request } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { processStats, serverPid, startServerProcess, type ServerProcess } from '../helpers/process.js';
import { call } from '../helpers/http.js';
import { fullUser, type Owner } from '../helpers/resources.js';

const SOAK = !!process.env.CAIRN_SOAK;
const SECONDS = Number(process.env.LOAD_SECONDS ?? (SOAK ? 60 : 10));
const RATE = Number(process.env.LOAD_RATE ?? (SOAK ? 200 : 60));
const WARMUP_S = SOAK ? 30 : 3; // docs/reliability.md, "What the RSS measure means"
const WINDOW_S = SOAK ? 10 : 2;

const dataDir = mkdtempSync(path.join(tmpdir(), 'cairn-load-'));
let server: ServerProcess | undefined;
afterAll(async () => {
  agent.destroy();
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

type U = Owner & { todos: string[] };

// A fixed pool of 16 keep-alive connections (as a client library or a proxy would hold): the
// server's descriptors then measure what it keeps, not how many connections the client opened.
// The connections are used in turn (fifo), so none sits idle; one that does is dropped by the
// client after 4 s, before the server's 5 s keep-alive timeout. Otherwise a request sent on a
// connection the server is closing at that moment fails with ECONNRESET (the keep-alive race every
// HTTP client must avoid; the soak's first run hit it with Node's default lifo reuse).
const POOL = 16;
const agent = new Agent({ keepAlive: true, maxSockets: POOL, timeout: 4_000, scheduling: 'fifo' });
function send(method: string, p: string, token: string, body?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(server!.url + p, { method, agent, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('load and leaks (issue 18.6)', () => {
  it(`${SECONDS} s at ${RATE} requests/s over reads, writes, views and search: no errors, RSS and fds flat`, async () => {
    // The built server as `npm start` runs it (node <the start script's V8 flags> dist/server/main.js),
    // not tsx: tsx's loader adds ~40 MiB of RSS of its own, and the flags change the heap.
    // LOAD_INJECT_LEAK=<bytes>: the self-check that this test catches a per-request leak.
    const leak: Record<string, string> = process.env.LOAD_INJECT_LEAK ? { NODE_OPTIONS: `--require ${path.join(import.meta.dirname, 'inject-leak.cjs')}`, LOAD_INJECT_LEAK: process.env.LOAD_INJECT_LEAK } : {};
    server = await startServerProcess(dataDir, { CAIRN_RATE_LIMIT_FACTOR: '1000000', ...leak }, { built: true });
    const s = server;
    const pid = serverPid(s);
    const users: U[] = [];
    for (let i = 0; i < 4; i++) {
      const o = await fullUser(s);
      const todos: string[] = [];
      for (let j = 0; j < 30; j++) todos.push((await call(s, 'POST', '/v1/todos', { token: o.pat, body: { title: `load ${i} ${j} groceries`, whenDate: j % 3 ? '2026-11-22' : null, notes: 'n'.repeat(j * 20) } })).body.id);
      users.push({ ...o, todos });
    }
    let n = 0;
    const pick = <T,>(xs: T[]) => xs[n % xs.length]!;
    const get = (u: U, p: string, tok = u.pat) => send('GET', p, tok);
    const write = (method: string, p: string, body: unknown, u: U) => send(method, p, u.pat, JSON.stringify(body));
    const mix: ((u: U) => Promise<number>)[] = [
      (u) => get(u, `/v1/todos/${pick(u.todos)}`),
      (u) => get(u, `/v1/todos/${pick(u.todos)}`, u.session),
      (u) => get(u, '/v1/todos?limit=50'),
      (u) => write('POST', '/v1/todos', { title: `new ${n}` }, u),
      (u) => write('PATCH', `/v1/todos/${pick(u.todos)}`, { title: `patched ${n}` }, u),
      (u) => write('POST', `/v1/todos/${pick(u.todos)}/${n % 2 ? 'complete' : 'reopen'}`, {}, u),
      (u) => get(u, '/v1/views/today?today=2026-11-22'),
      (u) => get(u, '/v1/views/anytime'),
      (u) => get(u, '/v1/views/upcoming?today=2026-11-22'),
      (u) => get(u, '/v1/search?q=groceries'),
    ];
    const latencies: number[] = [];
    const errors: string[] = [];
    const samples: { t: number; rss: number; fds: number; sockets: number }[] = [];
    const total = (WARMUP_S + SECONDS) * RATE;
    const start = performance.now();
    const inflight: Promise<void>[] = [];
    const sampler = setInterval(() => samples.push({ t: (performance.now() - start) / 1000, ...processStats(pid) }), 250);
    for (let i = 0; i < total; i++) {
      const due = start + (i * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      n = i;
      const u = users[i % users.length]!;
      const req = mix[(i * 7) % mix.length]!;
      const measured = i >= WARMUP_S * RATE;
      const t0 = performance.now();
      inflight.push(
        req(u)
          .then((status) => {
            if (status >= 400 && status !== 409) errors.push(`${status}`); // 409: a complete of a completed to-do
            if (measured) latencies.push(performance.now() - t0);
          })
          .catch((e: Error) => void errors.push(e.message)),
      );
    }
    await Promise.all(inflight);
    clearInterval(sampler);
    const elapsed = (performance.now() - start) / 1000;
    latencies.sort((a, b) => a - b);
    const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!;
    const window = (from: number, to: number) => {
      const w = samples.filter((x) => x.t >= from && x.t < to);
      // Descriptors other than sockets (the database, its WAL, files, timers...): what a leak grows.
      // Sockets follow the client's connections (at most its 16 plus the listener), checked apart.
      return { rss: w.reduce((a, x) => a + x.rss, 0) / w.length, fds: w.reduce((a, x) => a + x.fds - x.sockets, 0) / w.length, sockets: Math.max(...w.map((x) => x.sockets)) };
    };
    const first = window(WARMUP_S, WARMUP_S + WINDOW_S);
    const last = window(WARMUP_S + SECONDS - WINDOW_S, WARMUP_S + SECONDS);
    console.log(
      `load: ${latencies.length} measured requests at ${RATE}/s (${(total / elapsed).toFixed(0)}/s achieved), p50 ${q(0.5).toFixed(1)} ms, p99 ${q(0.99).toFixed(1)} ms, max ${latencies.at(-1)!.toFixed(1)} ms; ` +
        `RSS ${(first.rss / 2 ** 20).toFixed(1)} -> ${(last.rss / 2 ** 20).toFixed(1)} MiB, non-socket fds ${first.fds.toFixed(1)} -> ${last.fds.toFixed(1)}, sockets at most ${first.sockets} -> ${last.sockets}; errors ${errors.length}`,
    );
    expect(errors.slice(0, 5)).toEqual([]);
    // A leak only grows RSS: the growth is bounded, a drop is not (the kernel reclaiming the
    // binary's file-backed pages on a busy machine, or a major GC handing memory back, is no
    // leak). 10%, with a floor of 12 MiB for a small server: at this one's 130-220 MiB the floor
    // changes nothing, so the soak's proof holds (a 2 KB-per-request leak, ~20 MB between its
    // windows, fails it).
    expect(last.rss - first.rss, 'RSS growth (bytes)').toBeLessThanOrEqual(Math.max(0.1 * first.rss, 12 * 2 ** 20));
    expect(Math.abs(last.fds - first.fds) / first.fds).toBeLessThanOrEqual(0.1);
    // Sockets: at most the client's pool of 16, the listener and some closing. Bounded by the pool,
    // not by the first window: how many of the 16 are open at a sample follows the latency of the
    // moment (8 in a quiet first window, 16 after one slow answer), which is the client's doing.
    expect(last.sockets).toBeLessThanOrEqual(POOL + 8);
  }, 180_000 + (WARMUP_S + SECONDS) * 3_000); // the first start may build dist (~25 s, more on a busy machine)
});
