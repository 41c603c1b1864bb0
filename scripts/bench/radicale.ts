// Debian's Radicale (a plaintext CalDAV server in Python) as the CalDAV scenarios' anchor
// (issue 30 "Performance"): started by the bench on 127.0.0.1 and a free port, with a temporary
// storage folder, htpasswd auth (plain, one fixed test user) and its own config file only (never
// /etc/radicale). Its storage is written directly in Radicale's multifilesystem layout
// (collection-root/<user>/<collection>/<name>.ics plus .Radicale.props), from the exact iCalendar
// Cairn serves, so both servers hold the same to-dos under the same names and UIDs.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { freePort, onCleanup, spawnTracked, type Child } from './procs.js';

export const RADICALE_USER = 'bench';

export type RadicaleCollection = { id: string; displayName: string; objects: { name: string; data: string }[] };
export type RadicaleServer = { child: Child; url: string; user: string; password: string; version: string };

/** The installed Radicale's version, or null when there is none (the scenarios are then skipped). */
export function radicaleVersion(): string | null {
  const r = spawnSync('radicale', ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

/** Writes the collections into a fresh storage folder, then starts Radicale on it. */
export async function startRadicale(collections: RadicaleCollection[], keep = false): Promise<RadicaleServer> {
  const version = radicaleVersion();
  if (!version) throw new Error('radicale is not installed');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-radicale-'));
  if (!keep) onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  const home = path.join(dir, 'storage', 'collection-root', RADICALE_USER);
  mkdirSync(home, { recursive: true });
  for (const c of collections) {
    const folder = path.join(home, c.id);
    mkdirSync(folder);
    writeFileSync(path.join(folder, '.Radicale.props'), JSON.stringify({ 'C:supported-calendar-component-set': 'VTODO', 'D:displayname': c.displayName, tag: 'VCALENDAR' }));
    for (const o of c.objects) writeFileSync(path.join(folder, o.name), o.data);
  }
  const password = randomBytes(12).toString('hex');
  writeFileSync(path.join(dir, 'users'), `${RADICALE_USER}:${password}\n`, { mode: 0o600 });
  const port = await freePort();
  const config = [
    '[server]',
    `hosts = 127.0.0.1:${port}`,
    '[auth]',
    'type = htpasswd',
    `htpasswd_filename = ${path.join(dir, 'users')}`,
    'htpasswd_encryption = plain',
    '[rights]',
    'type = owner_only',
    '[storage]',
    `filesystem_folder = ${path.join(dir, 'storage')}`,
    '[web]',
    'type = none',
    // Radicale's default (info) logs every request; warning is its fastest setting, so the anchor
    // is Radicale at its best (Cairn keeps LOG_LEVEL=info, its access log to /dev/null).
    '[logging]',
    'level = warning',
    '',
  ].join('\n');
  const configFile = path.join(dir, 'config');
  writeFileSync(configFile, config);
  const child = spawnTracked('radicale', ['--config', configFile], 'radicale');
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.proc.exitCode !== null) throw new Error(`radicale exited (${child.proc.exitCode}) before it listened\n${child.stderr()}`);
    try {
      const res = await fetch(`${url}/`, { signal: AbortSignal.timeout(1_000) });
      await res.arrayBuffer();
      break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error(`radicale: not listening within 30 s\n${child.stderr()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return { child, url, user: RADICALE_USER, password, version };
}
