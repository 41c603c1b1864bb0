// Issue 11.2, 11.3 (docs/security.md "What revocation, expiry and deletion guarantee"): a thief
// holding an old token and a later copy of DATA_DIR (cairn.db, -wal, -shm; no master key needed
// for this attack) must not find the old credential's wrap of the data key, and deleted content
// must not linger in free pages or the WAL. Each case captures the exact bytes at stake before
// the revocation or deletion, then scans a copy of the files taken while the server runs.
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, registerUser } from '../helpers/http.js';
import { runJob, JOBS } from '../../server/jobs/scheduler.js';
import { sha256, fromB64u } from '../../core/crypto/secrets.js';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.close());

/** What a copy of DATA_DIR taken now holds: the bytes of every database file. */
function copyOfDataDir(): Buffer {
  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-stolen-'));
  try {
    const parts: Buffer[] = [];
    for (const f of ['cairn.db', 'cairn.db-wal', 'cairn.db-shm']) {
      const from = path.join(app.dataDir, f);
      if (!existsSync(from)) continue;
      copyFileSync(from, path.join(dir, f));
      parts.push(readFileSync(path.join(dir, f)));
    }
    return Buffer.concat(parts);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const q = <T>(sql: string, ...args: unknown[]) => app.deps.db.$client.prepare(sql).get(...args) as T;
const wrapOf = (credentialId: string) => q<{ w: Buffer }>('SELECT wrapped_key AS w FROM credentials WHERE id = ?', credentialId).w;
const sessionId = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()).sid as string;
const secretHashOfPat = (token: string) => sha256(fromB64u(token.slice('cairn_pat_'.length))!);

function expectGone(bytes: Buffer[], what: string) {
  const disk = copyOfDataDir();
  for (const b of bytes) expect(disk.includes(b), `${what} still readable in a copy of DATA_DIR`).toBe(false);
}

describe('a revoked credential leaves no wrap on disk (issue 11.2)', () => {
  it('DELETE /v1/keys/{id}: the token wrap and hash are gone from the file and the WAL', async () => {
    const u = await registerUser(app);
    const pat = await createPat(app, u.session, ['tags:read']);
    const wrap = wrapOf(pat.id);
    expect(copyOfDataDir().includes(wrap)).toBe(true); // the scan finds what is there
    expect((await call(app, 'DELETE', `/v1/keys/${pat.id}`, { token: u.session })).status).toBe(204);
    expectGone([wrap], 'the revoked token wrap');
  });

  it('logout, revoke-all and a password change: every old session and token wrap is gone', async () => {
    const u = await registerUser(app, undefined, 'revoke password 1');
    const other = (await call(app, 'POST', '/v1/auth/login', { body: { email: u.email, password: 'revoke password 1' } })).body.token as string;
    const third = (await call(app, 'POST', '/v1/auth/login', { body: { email: u.email, password: 'revoke password 1' } })).body.token as string;
    const pat = await createPat(app, u.session, ['tags:read']);
    const pwWrap = q<{ w: Buffer }>('SELECT pw_wrapped_key AS w FROM users WHERE id = ?', u.userId).w;
    const wraps = { first: wrapOf(sessionId(u.session)), other: wrapOf(sessionId(other)), third: wrapOf(sessionId(third)), pat: wrapOf(pat.id) };
    expect((await call(app, 'POST', '/v1/auth/logout', { token: other })).status).toBe(204);
    expectGone([wraps.other], 'a logged-out session wrap');
    const changed = await call(app, 'POST', '/v1/auth/password', { token: third, body: { currentPassword: 'revoke password 1', newPassword: 'revoke password 2' } });
    expect(changed.status).toBe(200);
    expectGone([wraps.first, wraps.third, wraps.pat, pwWrap], 'a credential (or the old password wrap) ended by the password change');
    // A revoked token keeps its row (without a wrap) until the purge: it counts toward today's limit.
    expect(copyOfDataDir().includes(secretHashOfPat(pat.token))).toBe(true);
    // And the old password's wrap of the data key went with the old password record.
    const fresh = changed.body.token as string;
    const freshWrap = wrapOf(sessionId(fresh));
    expect((await call(app, 'POST', '/v1/auth/revoke-all', { token: fresh })).status).toBe(204);
    expectGone([freshWrap], 'a session ended by revoke-all');
  });
});

describe('expired credentials are purged with their wraps (issue 11.3)', () => {
  it('the purge job deletes expired sessions and tokens; their wraps leave the file and the WAL', async () => {
    const local = await startApp();
    try {
      const u = await registerUser(local);
      const pat = await createPat(local, u.session, ['tags:read'], 30);
      const wraps = [
        (local.deps.db.$client.prepare('SELECT wrapped_key AS w FROM credentials WHERE id = ?').get(pat.id) as { w: Buffer }).w,
        (local.deps.db.$client.prepare('SELECT wrapped_key AS w FROM credentials WHERE id = ?').get(sessionId(u.session)) as { w: Buffer }).w,
      ];
      local.clock.advance(31 * 86_400_000);
      runJob(local.deps, JOBS.find((j) => j.name === 'purge-credentials')!);
      expect((local.deps.db.$client.prepare('SELECT count(*) AS n FROM credentials WHERE user_id = ?').get(u.userId) as { n: number }).n).toBe(0);
      const disk = Buffer.concat(['cairn.db', 'cairn.db-wal'].filter((f) => existsSync(path.join(local.dataDir, f))).map((f) => readFileSync(path.join(local.dataDir, f))));
      for (const w of wraps) expect(disk.includes(w)).toBe(false);
    } finally {
      await local.close();
    }
  });
});

describe('deleted content leaves no ciphertext behind (issue 11.2)', () => {
  it('DELETE /v1/notes/{id}: the sealed body is gone from free pages and the WAL', async () => {
    const u = await registerUser(app);
    const note = await call(app, 'POST', '/v1/notes', { token: u.session, body: { body: 'a note to shred '.repeat(40) } });
    expect(note.status).toBe(201);
    const sealed = q<{ s: Buffer }>('SELECT sealed AS s FROM notes WHERE id = ?', note.body.id).s;
    const versions = (app.deps.db.$client.prepare('SELECT sealed AS s FROM note_versions WHERE note_id = ?').all(note.body.id) as { s: Buffer }[]).map((r) => r.s);
    expect(copyOfDataDir().includes(sealed)).toBe(true);
    expect((await call(app, 'DELETE', `/v1/notes/${note.body.id}`, { token: u.session })).status).toBe(204);
    expectGone([sealed, ...versions], 'the deleted note ciphertext');
  });
});
