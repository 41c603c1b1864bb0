// Issue 29 items 1 and 2: sealed format v2 (XChaCha20-Poly1305 on libsodium). Every write seals v2;
// opens read v1 and v2; a data directory written by the v1 code (core/crypto/seal-v1.ts, through
// the real models over HTTP) opens, reads, updates, rotates and ends fully v2; `cairn reseal`
// re-seals one account without ending its credentials. docs/sealed-format.md.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { restartApp, stopKeepingData } from '../helpers/restart.js';
import { call, expectProblem } from '../helpers/http.js';
import { createEveryResource, fullUser, type Owner } from '../helpers/resources.js';
import { blobColumns, columnsWithV1, NOT_SEALED, versionCounts, writingV1 } from '../helpers/sealed-scan.js';
import { open, openJson, rowAad, seal, sealedVersion, sealJson, SealError } from '../../core/crypto/seal.js';
import { sealV1 } from '../../core/crypto/seal-v1.js';
import { resealAccount, SEALED_COLUMNS, unlockAccount } from '../../routers/auth/reseal.js';
import { resealCommand } from '../../server/cli-reseal.js';

const key = randomBytes(32);
const aad = rowAad('U1', 'todos', 'T1');
const ROW = Buffer.from(JSON.stringify({ title: 'A to-do of about the usual size', notes: 'n'.repeat(200), whenDate: '2026-11-23', tags: ['a'] }));

const flip = (b: Buffer, at: number, bit = 0) => {
  const c = Buffer.from(b);
  c[at] = c[at]! ^ (1 << bit);
  return c;
};

describe('format v2', () => {
  it('every seal writes v2: version 2, a 24-byte nonce, the ciphertext and a 16-byte tag', () => {
    const blob = seal(key, aad, ROW);
    expect(blob[0]).toBe(2);
    expect(sealedVersion(blob)).toBe(2);
    expect(blob.length).toBe(1 + 24 + ROW.length + 16);
    expect(blob.includes(ROW.subarray(0, 16))).toBe(false);
    expect(open(key, aad, blob).equals(ROW)).toBe(true);
    // Fresh nonces: the same plaintext never seals to the same bytes.
    const nonces = new Set(Array.from({ length: 500 }, () => seal(key, aad, ROW).subarray(1, 25).toString('hex')));
    expect(nonces.size).toBe(500);
    // The empty plaintext, JSON, and a window into a larger buffer.
    expect(open(key, aad, seal(key, aad, Buffer.alloc(0))).length).toBe(0);
    expect(openJson(key, aad, sealJson(key, aad, { a: 'ü' }))).toEqual({ a: 'ü' });
    const big = Buffer.concat([Buffer.alloc(9, 7), blob, Buffer.alloc(3, 7)]);
    expect(open(key, aad, big.subarray(9, 9 + blob.length)).equals(ROW)).toBe(true);
  });

  it('opens v1 blobs made by the v1 code, and v2', () => {
    const v1 = sealV1(key, aad, ROW);
    expect(v1[0]).toBe(1);
    expect(v1.length).toBe(1 + 12 + 16 + ROW.length);
    expect(open(key, aad, v1).equals(ROW)).toBe(true);
    expect(() => open(key, rowAad('U1', 'todos', 'T2'), v1)).toThrow(SealError);
    expect(() => open(randomBytes(32), aad, v1)).toThrow(SealError);
  });

  it('a v2 blob moved to another row, another user or another table, or opened with another key, fails', () => {
    const blob = seal(key, aad, ROW);
    for (const other of [rowAad('U1', 'todos', 'T2'), rowAad('U2', 'todos', 'T1'), rowAad('U1', 'tags', 'T1'), rowAad('U1', 'todo', 's\0T1'), Buffer.alloc(0)]) {
      expect(() => open(key, other, blob)).toThrow(SealError);
    }
    expect(() => open(randomBytes(32), aad, blob)).toThrow(SealError);
  });

  it('a flipped bit anywhere (version, nonce, ciphertext, tag) fails', () => {
    const blob = seal(key, aad, ROW);
    const tagAt = blob.length - 16;
    const places: [string, number][] = [
      ['version', 0],
      ['nonce, first byte', 1],
      ['nonce, a middle byte', 12],
      ['nonce, last byte', 24],
      ['ciphertext, first byte', 25],
      ['ciphertext, last byte', tagAt - 1],
      ['tag, first byte', tagAt],
      ['tag, last byte', blob.length - 1],
    ];
    for (const [name, at] of places) {
      for (let bit = 0; bit < 8; bit++) expect(() => open(key, aad, flip(blob, at, bit)), `${name}, bit ${bit}`).toThrow(SealError);
    }
    // Every single byte, one bit each (the whole blob is covered).
    for (let at = 0; at < blob.length; at++) expect(() => open(key, aad, flip(blob, at, at % 8)), `byte ${at}`).toThrow(SealError);
    // A v1 blob with its version set to 2 does not open as v2 (and the reverse).
    const v1 = sealV1(key, aad, ROW);
    expect(() => open(key, aad, Buffer.concat([Buffer.of(2), v1.subarray(1)]))).toThrow(SealError);
    expect(() => open(key, aad, Buffer.concat([Buffer.of(1), blob.subarray(1)]))).toThrow(SealError);
  });

  it('refuses unknown versions, short and truncated blobs', () => {
    const blob = seal(key, aad, ROW);
    for (const v of [0, 3, 4, 0x7f, 0x80, 0xff]) {
      expect(() => open(key, aad, Buffer.concat([Buffer.of(v), blob.subarray(1)])), `version ${v}`).toThrow(SealError);
      expect(sealedVersion(Buffer.of(v))).toBeNull();
    }
    for (const n of [0, 1, 25, 40]) expect(() => open(key, aad, blob.subarray(0, n)), `${n} bytes`).toThrow(SealError);
    expect(() => open(key, aad, blob.subarray(0, blob.length - 1))).toThrow(SealError);
    expect(() => open(key, aad, Buffer.concat([blob, Buffer.of(0)]))).toThrow(SealError);
  });
});

const MARK = 'SealedV1Mark';

/** What the API answers for everything the owner has: compared before and after each step. */
async function readAll(app: TestApp, token: string, ids: Record<string, string>) {
  const get = async (path: string) => {
    const r = await call(app, 'GET', path, { token });
    expect(r.status, `${path}: ${r.text}`).toBe(200);
    return r.body;
  };
  const file = await fetch(`${app.url}/v1/attachments/${ids['attachments/files']}/file`, { headers: { authorization: `Bearer ${token}` } });
  expect(file.status).toBe(200);
  return {
    me: (await get('/v1/me')).email,
    todo: await get(`/v1/todos/${ids.todos}`),
    todos: await get('/v1/todos?limit=50'),
    tag: await get(`/v1/tags/${ids.tags}`),
    container: await get(`/v1/containers/${ids.containers}`),
    heading: await get(`/v1/headings/${ids.headings}`),
    folder: await get(`/v1/note-folders/${ids['note-folders']}`),
    note: await get(`/v1/notes/${ids.notes}`),
    version: await get(`/v1/note-versions/${ids.versions}`),
    filter: await get(`/v1/filters/${ids.filters}`),
    filtered: await get(`/v1/filters/${ids.filters}/todos`),
    inbox: await get(`/v1/inbox/${ids.inbox}`),
    attachment: await get(`/v1/attachments/${ids.attachments}`),
    fileBytes: await file.text(),
    webhook: await get(`/v1/webhooks/${ids.webhooks}`),
    settings: await get('/v1/settings'),
    search: await get(`/v1/search?q=${MARK.toLowerCase()}`),
    upcoming: await get('/v1/views/upcoming?today=2026-11-20'),
    keys: (await get('/v1/keys')).data.map((k: { name: string }) => k.name),
  };
}

/** The sealed columns v1Account fills (every table of db/sealed.ts at the time of issue 29, and more). */
const FILLED = [
  ...['users', 'credentials', 'tags', 'settings', 'idempotency_keys', 'containers', 'headings', 'todos', 'note_folders', 'notes', 'note_versions', 'filters', 'attachments', 'inbox_items', 'todo_index_chunks'].map((t) => `${t}.sealed`),
  'webhooks.sealed_description',
  'attachment_chunks.sealed',
  'webhooks.sealed_target',
  'users.pw_wrapped_key',
  'credentials.wrapped_key',
  'oauth_tokens.wrapped_key',
];

/** Every sealed value of `user`: all of it v1, and each column of FILLED has some. */
function expectAllV1(app: TestApp, userId: string) {
  const counts = versionCounts(app.deps.db.$client, userId);
  for (const c of FILLED) expect(counts[c]!.v1, `${c} holds v1 values`).toBeGreaterThan(0);
  for (const [c, n] of Object.entries(counts)) expect({ c, v2: n.v2, other: n.other }).toEqual({ c, v2: 0, other: 0 });
}

/** A user with one of everything, written by the v1 code through the API (never hand-made bytes). */
async function v1Account(app: TestApp): Promise<{ owner: Owner; ids: Record<string, string> }> {
  return writingV1(async () => {
    const owner = await fullUser(app);
    const ids = await createEveryResource(app, owner, MARK);
    expect((await call(app, 'PATCH', '/v1/settings', { token: owner.session, body: { weekStart: 'sunday' } })).status).toBe(200);
    // A stored idempotent answer.
    const idem = await call(app, 'POST', '/v1/tags', { token: owner.pat, body: { name: `idem ${MARK}` }, headers: { 'Idempotency-Key': `k-${owner.userId}` } });
    expect(idem.status).toBe(201);
    ids.idemTag = idem.body.id;
    // A few more to-dos, so the index has several chunks.
    for (let i = 0; i < 12; i++) {
      expect((await call(app, 'POST', '/v1/todos', { token: owner.pat, body: { title: `more ${MARK} ${i}`, whenDate: '2026-11-2' + (i % 9) } })).status).toBe(201);
    }
    return { owner, ids };
  });
}

describe('a data directory written by the v1 code', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ CAIRN_UNSAFE_ALLOW_LOOPBACK: '1' });
  });
  afterAll(() => app.close());

  it('every BLOB column of the schema is a known sealed column or a known hash/index', () => {
    const sealed = new Set(SEALED_COLUMNS.map((c) => `${c.table}.${c.column}`));
    const unknown = blobColumns(app.deps.db.$client).filter((c) => !sealed.has(c) && !(c in NOT_SEALED));
    expect(unknown, 'add the column to SEALED_COLUMNS (routers/auth/reseal.ts) or to NOT_SEALED (test/helpers/sealed-scan.ts)').toEqual([]);
  });

  it('opens without a step, reads, updates, rotates the key and ends fully v2', async () => {
    const { owner, ids } = await v1Account(app);
    const sqlite0 = app.deps.db.$client;
    expectAllV1(app, owner.userId);
    const before = await readAll(app, owner.session, ids);
    expect(before.todo.title).toBe(`todo ${MARK}`);
    expect(before.fileBytes).toBe(`file bytes ${MARK}`);
    expect(before.webhook.url).toContain('hook-');
    expect(sqlite0.prepare('SELECT count(*) FROM attachment_chunks WHERE user_id = ?').pluck().get(owner.userId)).toBeGreaterThan(0);

    // The server restarts on the same files (the upgrade): everything reads as before, with every
    // credential made by the v1 code (session, personal token, OAuth access token).
    stopKeepingData(app);
    app = await restartApp(app, { CAIRN_UNSAFE_ALLOW_LOOPBACK: '1' });
    const sqlite = app.deps.db.$client;
    expect(await readAll(app, owner.session, ids)).toEqual(before);
    expect(await readAll(app, owner.pat, ids)).toEqual(before);
    expect((await call(app, 'GET', `/v1/todos/${ids.todos}`, { token: owner.oauth!.access })).body.title).toBe(`todo ${MARK}`);
    // The stored idempotent answer (v1) replays.
    const replay = await call(app, 'POST', '/v1/tags', { token: owner.pat, body: { name: `idem ${MARK}` }, headers: { 'Idempotency-Key': `k-${owner.userId}` } });
    expect(replay.status).toBe(201);
    expect(replay.body.id).toBe(ids.idemTag);

    // An update seals v2 (the row, its index chunk); the rest stays v1 and still reads.
    const patched = await call(app, 'PATCH', `/v1/todos/${ids.todos}`, { token: owner.session, body: { title: `todo ${MARK} v2` } });
    expect(patched.status, patched.text).toBe(200);
    const row = sqlite.prepare('SELECT sealed FROM todos WHERE id = ?').pluck().get(ids.todos) as Buffer;
    expect(row[0]).toBe(2);
    const mixed = versionCounts(sqlite, owner.userId);
    expect(mixed['todos.sealed']!.v1).toBeGreaterThan(0);
    expect(mixed['todos.sealed']!.v2).toBe(1);
    expect(mixed['todo_index_chunks.sealed']!.v2).toBeGreaterThan(0);
    expect((await call(app, 'GET', `/v1/search?q=${MARK.toLowerCase()}+v2`, { token: owner.session })).body.data.map((h: { id: string }) => h.id)).toEqual([ids.todos]);
    const middle = await readAll(app, owner.session, ids);
    expect(middle.todo.title).toBe(`todo ${MARK} v2`);
    expect({ ...middle, todo: before.todo, todos: before.todos, search: before.search, upcoming: before.upcoming, filtered: before.filtered }).toEqual(before);

    // Key rotation re-seals everything, in v2, under the new key; every credential ends.
    const rotated = await call(app, 'POST', '/v1/auth/rotate-key', { token: owner.session, body: { password: owner.password } });
    expect(rotated.status, rotated.text).toBe(200);
    expect(columnsWithV1(sqlite), 'no v1 value is left anywhere in the database').toEqual([]);
    const after = versionCounts(sqlite, owner.userId);
    for (const c of FILLED.filter((c) => c !== 'credentials.wrapped_key' && c !== 'oauth_tokens.wrapped_key')) expect(after[c]!.v2, c).toBeGreaterThan(0);
    expect(after['users.pw_wrapped_key']).toEqual({ v1: 0, v2: 1, other: 0 });
    expect(after['credentials.wrapped_key']!.v2).toBe(1); // the new session's wrap
    const token = rotated.body.token as string;
    const end = await readAll(app, token, ids);
    expect(end).toEqual({ ...middle, keys: end.keys });
    expectProblem(await call(app, 'GET', '/v1/me', { token: owner.pat }), 401, 'unauthorized');
    // The new key's password wrap (v2) opens at login.
    expect((await call(app, 'POST', '/v1/auth/login', { body: { email: owner.email, password: owner.password } })).status).toBe(200);
  });

  it('`cairn reseal` re-seals an account as v2 without ending its credentials', async () => {
    const { owner, ids } = await v1Account(app);
    const sqlite = app.deps.db.$client;
    expectAllV1(app, owner.userId);
    const before = await readAll(app, owner.session, ids);
    const wrongPassword = resealCommand(app.deps, owner.email, async () => 'not the password', { out: () => {}, err: () => {} });
    await expect(wrongPassword).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await expect(resealCommand(app.deps, 'nobody@example.test', async () => owner.password, { out: () => {}, err: () => {} })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });

    const lines: string[] = [];
    const summary = await resealCommand(app.deps, owner.email, async () => owner.password, { batchRows: 10, pauseMs: 0, out: (l) => lines.push(l), err: (l) => lines.push(l) });
    expect(summary.batches).toBeGreaterThan(3);
    expect(summary.unopened).toBe(0);
    expect(summary.walTruncated).toBe(true);
    expect(JSON.parse(lines.find((l) => l.startsWith('{'))!)).toEqual(summary);
    // Everything but the wraps of credentials made before is v2; those are named, not re-made.
    expect(columnsWithV1(sqlite, owner.userId).sort()).toEqual(['credentials.wrapped_key', 'oauth_tokens.wrapped_key']);
    expect(Object.keys(summary.leftV1Wraps).sort()).toEqual(['credentials.wrapped_key', 'oauth_tokens.wrapped_key']);
    expect(lines.some((l) => /stay in format v1/.test(l))).toBe(true);
    const counts = versionCounts(sqlite, owner.userId);
    expect(summary.resealed).toBe(
      Object.entries(counts)
        .filter(([c]) => !(c in summary.leftV1Wraps))
        .reduce((a, [, n]) => a + n.v2, 0),
    );
    // No credential ended; everything reads as before, with each of them.
    expect(await readAll(app, owner.session, ids)).toEqual(before);
    expect(await readAll(app, owner.pat, ids)).toEqual(before);
    expect((await call(app, 'GET', `/v1/todos/${ids.todos}`, { token: owner.oauth!.access })).status).toBe(200);
    // The password wrap was re-made (v2) and still opens the same key.
    expect(counts['users.pw_wrapped_key']).toEqual({ v1: 0, v2: 1, other: 0 });
    const login = await call(app, 'POST', '/v1/auth/login', { body: { email: owner.email, password: owner.password } });
    expect(login.status).toBe(200);
    expect(await readAll(app, login.body.token, ids)).toEqual({ ...before, keys: (await readAll(app, login.body.token, ids)).keys });

    // A second run finds nothing left to do.
    const again = await resealCommand(app.deps, owner.email, async () => owner.password, { out: () => {}, err: () => {} });
    expect(again.resealed).toBe(0);
    // Revoking everything ends the old wraps too: the account is then v2 throughout.
    expect((await call(app, 'POST', '/v1/auth/revoke-all', { token: login.body.token })).status).toBeLessThan(300);
    expect(columnsWithV1(sqlite, owner.userId)).toEqual([]);
  });

  it('stops, leaving what it did, when the password or key changes while it runs', async () => {
    const { owner } = await v1Account(app);
    let rotated = false;
    const run = resealCommand(app.deps, owner.email, async () => owner.password, {
      batchRows: 5,
      pauseMs: 0,
      out: () => {},
      err: () => {},
      onBatch: async (p) => {
        if (p.batch === 2 && !rotated) {
          rotated = true;
          const r = await call(app, 'POST', '/v1/auth/rotate-key', { token: owner.session, body: { password: owner.password } });
          expect(r.status, r.text).toBe(200);
        }
      },
    });
    await expect(run).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(rotated).toBe(true);
    // The rotation re-sealed everything under the new key; nothing of the account is v1 or broken.
    expect(columnsWithV1(app.deps.db.$client, owner.userId)).toEqual([]);
    const login = await call(app, 'POST', '/v1/auth/login', { body: { email: owner.email, password: owner.password } });
    expect((await call(app, 'GET', '/v1/todos?limit=50', { token: login.body.token })).body.data.length).toBeGreaterThan(10);
  });
});

describe('reseal and a password change', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ CAIRN_UNSAFE_ALLOW_LOOPBACK: '1' });
  });
  afterAll(() => app.close());

  it('a password changed after the password was checked is never overwritten with the old wrap', async () => {
    const { owner, ids } = await v1Account(app);
    const unlocked = await unlockAccount(app.deps, owner.email, owner.password);
    const changed = await call(app, 'POST', '/v1/auth/password', { token: owner.session, body: { currentPassword: owner.password, newPassword: 'a brand new password 2' } });
    expect(changed.status, changed.text).toBe(200);
    await expect(resealAccount(app.deps, unlocked, { pauseMs: 0 })).rejects.toMatchObject({ code: 'CONFLICT' });
    // The new password still opens the account (its wrap is the one the change made).
    const login = await call(app, 'POST', '/v1/auth/login', { body: { email: owner.email, password: 'a brand new password 2' } });
    expect(login.status, login.text).toBe(200);
    expect((await call(app, 'GET', `/v1/todos/${ids.todos}`, { token: login.body.token })).body.title).toBe(`todo ${MARK}`);
    expect((await call(app, 'POST', '/v1/auth/login', { body: { email: owner.email, password: owner.password } })).status).toBe(401);
  });
});

describe('v2 blobs bound to their place, through the API', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app.close());

  it('a v2 blob moved to another row, another user or another table fails closed', async () => {
    const a = await fullUser(app);
    const b = await fullUser(app);
    const t1 = await call(app, 'POST', '/v1/todos', { token: a.pat, body: { title: 'Alpha secret' } });
    const t2 = await call(app, 'POST', '/v1/todos', { token: a.pat, body: { title: 'Beta' } });
    const tb = await call(app, 'POST', '/v1/todos', { token: b.pat, body: { title: 'Gamma' } });
    const tag = await call(app, 'POST', '/v1/tags', { token: a.pat, body: { name: 'Delta' } });
    const sqlite = app.deps.db.$client;
    const blob = sqlite.prepare('SELECT sealed FROM todos WHERE id = ?').pluck().get(t1.body.id) as Buffer;
    expect(blob[0]).toBe(2);
    const refused = async (token: string, path: string) => {
      const r = await call(app, 'GET', path, { token });
      expectProblem(r, 500, 'internal');
      expect(r.text).not.toContain('Alpha');
    };
    // Another row of the same user and table.
    sqlite.prepare('UPDATE todos SET sealed = ? WHERE id = ?').run(blob, t2.body.id);
    await refused(a.pat, `/v1/todos/${t2.body.id}`);
    // Another user's row.
    sqlite.prepare('UPDATE todos SET sealed = ? WHERE id = ?').run(blob, tb.body.id);
    await refused(b.pat, `/v1/todos/${tb.body.id}`);
    // Another table of the same user (a to-do's blob in a tag's row).
    sqlite.prepare('UPDATE tags SET sealed = ? WHERE id = ?').run(blob, tag.body.id);
    await refused(a.pat, `/v1/tags/${tag.body.id}`);
    // The original still opens.
    expect((await call(app, 'GET', `/v1/todos/${t1.body.id}`, { token: a.pat })).body.title).toBe('Alpha secret');
  });
});
