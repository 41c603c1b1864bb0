// DECISIONS §3 / issue 2 item 3: content is sealed at rest, bound to its row, and only a live
// credential can unwrap the user's key.
import { readFileSync, existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, expectProblem, registerUser } from '../helpers/http.js';
import { SEALED_TABLES } from '../../db/sealed.js';
import { deriveServerKeys } from '../../core/crypto/master-key.js';
import { open, rowAad, SealError } from '../../core/crypto/seal.js';
import { credentialKek, unwrapDataKey } from '../../core/crypto/keywrap.js';
import { sha256 } from '../../core/crypto/secrets.js';
import { PAT_PREFIX, wrapPurpose } from '../../routers/auth/credentials.js';
import { html, pageServer, selfSignedCert, type PageServer } from '../helpers/tls.js';
import type { Resolver } from '../../core/net/index.js';
import { inboxTitlesSettled } from '../../routers/inbox/model.js';

const MARKER = 'MarkerZ9q7Xylophone';

function variants(s: string): Buffer[] {
  const b = Buffer.from(s, 'utf8');
  return [b, Buffer.from(s.toLowerCase()), Buffer.from(b.toString('base64')), Buffer.from(b.toString('hex')), Buffer.from(s, 'utf16le')];
}

function dbFiles(dir: string): string[] {
  return readdirSync(dir).filter((f) => f.startsWith('cairn.db')).map((f) => path.join(dir, f));
}

// Inbox url captures fetch their page title from a loopback HTTPS page (names resolve to loopback only).
const resolver: Resolver = async (name) => {
  if (name === 'localhost') return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
};

describe('sealed at rest', () => {
  let app: TestApp;
  let site: PageServer;
  beforeAll(async () => {
    const cert = selfSignedCert();
    site = await pageServer((_req, res) => html(res, `<html><head><title>${MARKER} page title</title></head></html>`), cert);
    app = await startApp({ CAIRN_UNSAFE_ALLOW_LOOPBACK: '1' }, {}, { outbound: { resolver, ca: cert.cert } });
  });
  afterAll(async () => {
    await inboxTitlesSettled();
    await site.close();
    await app.close();
  });

  it('a marker written through every resource is absent from the DB file and WAL, even with the master key', async () => {
    const email = `${MARKER.toLowerCase()}@example.test`;
    const u = await registerUser(app, email);
    await createPat(app, u.session, ['tags:write'], 30, `${MARKER} key`);
    // With an Idempotency-Key (itself holding the marker): the stored answer is sealed too.
    await call(app, 'POST', '/v1/tags', { token: u.session, body: { name: `${MARKER} tag` }, headers: { 'Idempotency-Key': `${MARKER}-key` } });
    await call(app, 'PATCH', '/v1/settings', { token: u.session, body: { weekStart: 'sunday' } });
    await app.caller(u.session).settings.putPlatformBlob({ platform: 'ios', blob: `${MARKER} blob` });
    const project = await call(app, 'POST', '/v1/containers', { token: u.session, body: { kind: 'project', name: `${MARKER} project`, notes: `${MARKER} notes` } });
    const heading = await call(app, 'POST', '/v1/headings', { token: u.session, body: { projectId: project.body.id, name: `${MARKER} heading` } });
    await call(app, 'POST', '/v1/todos', {
      token: u.session,
      body: {
        title: `${MARKER} todo`,
        notes: `${MARKER} todo notes`,
        parentId: project.body.id,
        headingId: heading.body.id,
        whenDate: '2026-11-23',
        tags: [`${MARKER} todo tag`],
        checklist: [{ title: `${MARKER} step` }],
        recurrence: { rule: 'FREQ=WEEKLY;BYDAY=MO', basis: 'schedule' },
      },
    });

    // A saved filter: name, criteria (a quoted tag name) and symbol; evaluated once.
    const filter = await call(app, 'POST', '/v1/filters', { token: u.session, body: { name: `${MARKER} filter`, criteria: `#"${MARKER} todo tag" or priority:high`, symbol: `${MARKER}` } });
    expect(filter.status).toBe(201);
    expect((await call(app, 'GET', `/v1/filters/${filter.body.id}/todos`, { token: u.session })).body.data[0].title).toBe(`${MARKER} todo`);
    // Every field that reaches the sealed to-do index went through the to-do above (dates, flags,
    // priority, recurrence) and the views read it back.
    expect((await call(app, 'GET', '/v1/views/upcoming?today=2026-11-20', { token: u.session })).body.days[0].todos[0].title).toBe(`${MARKER} todo`);
    // The search-text layer holds the folded (lower-cased) title, notes and checklist: searched once.
    const found = await call(app, 'GET', `/v1/search?q=${MARKER.toLowerCase()}+step&types=todo`, { token: u.session });
    expect(found.body.data.map((h: { title: string }) => h.title)).toEqual([`${MARKER} todo`]);
    const textChunks = app.deps.db.$client.prepare("SELECT count(*) AS n FROM todo_index_chunks WHERE user_id = ? AND id LIKE 't%'").get(u.userId) as { n: number };
    expect(textChunks.n).toBeGreaterThan(0);

    // Notes, note titles, folder names and note versions (created, edited, restored).
    const noteFolder = await call(app, 'POST', '/v1/note-folders', { token: u.session, body: { name: `${MARKER} folder` } });
    const noteRes = await call(app, 'POST', '/v1/notes', { token: u.session, body: { title: `${MARKER} note title`, body: `${MARKER} note body`, folderId: noteFolder.body.id } });
    await call(app, 'PATCH', `/v1/notes/${noteRes.body.id}`, { token: u.session, body: { body: `${MARKER} edited body` } });
    await call(app, 'POST', '/v1/notes', { token: u.session, body: { body: `${MARKER} band note`, parentId: project.body.id } });
    const noteVersion = (await call(app, 'GET', `/v1/notes/${noteRes.body.id}/versions`, { token: u.session })).body.data.at(-1);
    await call(app, 'POST', `/v1/notes/${noteRes.body.id}/versions/${noteVersion.id}/restore`, { token: u.session });

    // Attachments: title, url and text (and the kind) are sealed; the note relation is plaintext.
    const todoId = (await call(app, 'GET', '/v1/todos', { token: u.session })).body.data[0].id as string;
    const urlAtt = await call(app, 'POST', '/v1/attachments', { token: u.session, body: { parentType: 'todo', parentId: todoId, kind: 'url', url: `https://example.test/${MARKER}`, title: `${MARKER} link` } });
    expect(urlAtt.status).toBe(201);
    await call(app, 'POST', '/v1/attachments', { token: u.session, body: { parentType: 'container', parentId: project.body.id, kind: 'text', text: `${MARKER} attached text` } });
    await call(app, 'PATCH', `/v1/attachments/${urlAtt.body.id}`, { token: u.session, body: { title: `${MARKER} link renamed` } });
    // A file: its bytes (in sealed chunks), its content type and title.
    const fileRes = await fetch(`${app.url}/v1/attachments/files?parentType=todo&parentId=${todoId}&title=${encodeURIComponent(`${MARKER} file`)}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${u.session}`, 'content-type': `application/x-${MARKER.toLowerCase()}` },
      body: `${MARKER} file bytes `.repeat(10_000),
    });
    expect(fileRes.status).toBe(201);
    const fileId = ((await fileRes.json()) as { id: string }).id;

    // Inbox: a text capture, a url capture whose fetched page title holds the marker, a file capture's title.
    const inboxText = await call(app, 'POST', '/v1/inbox', { token: u.session, body: { kind: 'text', text: `${MARKER} inbox text` } });
    expect(inboxText.status).toBe(201);
    const inboxUrl = await call(app, 'POST', '/v1/inbox', { token: u.session, body: { kind: 'url', url: `${site.origin}/${MARKER}` } });
    expect(inboxUrl.status).toBe(201);
    await inboxTitlesSettled();
    expect((await call(app, 'GET', `/v1/inbox/${inboxUrl.body.id}`, { token: u.session })).body.title).toBe(`${MARKER} page title`);
    const inboxFile = await fetch(`${app.url}/v1/inbox/files?title=${encodeURIComponent(`${MARKER} capture`)}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${u.session}`, 'content-type': 'image/png' },
      body: `${MARKER} image bytes`,
    });
    expect(inboxFile.status).toBe(201);

    // A webhook subscription's description (sealed under the data key; its URL and secret are under
    // the master key, docs/security.md "Webhook secrets").
    const hook = await call(app, 'POST', '/v1/webhooks', { token: u.session, body: { url: `${site.origin}/hook`, events: ['todo.created'], description: `${MARKER} webhook` } });
    expect(hook.status, hook.text).toBe(201);

    // CalDAV (issue 30): an app password's name, a to-do written through /dav under a resource name
    // and a UID of the client's own, with the marker in its summary, description, categories and an
    // X- property (kept sealed beside the to-do: dav_resources), and a sync token (a sealed snapshot
    // of the calendar's membership, which holds the resource name).
    const davKey = await call(app, 'POST', '/v1/keys', { token: u.session, body: { name: `${MARKER} phone`, expiresInDays: 30, audience: 'dav' } });
    const davAuth = `Basic ${Buffer.from(`${email}:${davKey.body.token}`).toString('base64')}`;
    const davHref = `/dav/${u.userId}/standalone/${MARKER}-resource.ics`;
    const vtodo = ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//test//EN', 'BEGIN:VTODO', `UID:${MARKER}-uid@host`, `SUMMARY:${MARKER} dav summary`, `DESCRIPTION:${MARKER} dav description`, `CATEGORIES:${MARKER} dav category`, `X-CLIENT-THING:${MARKER} dav x-prop`, 'END:VTODO', 'END:VCALENDAR', ''].join('\r\n');
    const davPut = await fetch(`${app.url}${davHref}`, { method: 'PUT', headers: { authorization: davAuth, 'content-type': 'text/calendar' }, body: vtodo });
    expect(davPut.status).toBe(201);
    const davSync = await fetch(`${app.url}/dav/${u.userId}/standalone/`, {
      method: 'REPORT',
      headers: { authorization: davAuth, 'content-type': 'application/xml', depth: '1' },
      body: '<D:sync-collection xmlns:D="DAV:"><D:sync-token/><D:sync-level>1</D:sync-level><D:prop><D:getetag/></D:prop></D:sync-collection>',
    });
    expect(await davSync.text()).toContain(`${MARKER}-resource.ics`);
    const davGet = await fetch(`${app.url}${davHref}`, { headers: { authorization: davAuth } });
    expect(await davGet.text()).toContain(`X-CLIENT-THING:${MARKER} dav x-prop`);

    // Every sealed table got a row from this user (so a new table cannot be forgotten silently).
    for (const t of SEALED_TABLES) {
      const n = app.deps.db.$client.prepare(`SELECT count(*) AS n FROM "${t.table}" WHERE "${t.userCol}" = ? AND "${t.sealedCol}" IS NOT NULL`).get(u.userId) as { n: number };
      expect(n.n, `no sealed ${t.table} row was written`).toBeGreaterThan(0);
    }

    const files = dbFiles(app.dataDir);
    expect(files.some((f) => f.endsWith('-wal'))).toBe(true);
    for (const f of files) {
      const bytes = readFileSync(f);
      for (const v of variants(MARKER)) expect(bytes.includes(v), `${path.basename(f)} holds the marker`).toBe(false);
      expect(bytes.includes(Buffer.from('sunday'))).toBe(false);
    }

    // With the master key in hand, every server key still fails to open every sealed blob.
    const server = deriveServerKeys(app.masterKey);
    for (const t of SEALED_TABLES) {
      const rows = app.deps.db.$client.prepare(`SELECT "${t.idCol}" AS id, "${t.sealedCol}" AS sealed FROM "${t.table}" WHERE "${t.userCol}" = ?`).all(u.userId) as { id: string; sealed: Buffer | null }[];
      for (const row of rows) {
        if (!row.sealed) continue;
        for (const key of [app.masterKey, ...Object.values(server)]) {
          expect(() => open(key, rowAad(u.userId, t.table, row.id), row.sealed!)).toThrow(SealError);
        }
      }
    }
    // And the API still reads it all back with the credential.
    expect((await call(app, 'GET', '/v1/tags', { token: u.session })).body.data[0].name).toBe(`${MARKER} tag`);
    expect((await call(app, 'GET', `/v1/notes/${noteRes.body.id}`, { token: u.session })).body).toMatchObject({ title: `${MARKER} note title`, body: `${MARKER} note body` });
    expect((await call(app, 'GET', `/v1/note-folders/${noteFolder.body.id}`, { token: u.session })).body.name).toBe(`${MARKER} folder`);
    expect((await call(app, 'GET', `/v1/attachments/${urlAtt.body.id}`, { token: u.session })).body).toMatchObject({ url: `https://example.test/${MARKER}`, title: `${MARKER} link renamed` });
    const file = await fetch(`${app.url}/v1/attachments/${fileId}/file`, { headers: { authorization: `Bearer ${u.session}` } });
    expect(await file.text()).toBe(`${MARKER} file bytes `.repeat(10_000));
    expect((await call(app, 'GET', `/v1/inbox/${inboxText.body.id}`, { token: u.session })).body.text).toBe(`${MARKER} inbox text`);
    expect((await call(app, 'GET', `/v1/webhooks/${hook.body.id}`, { token: u.session })).body.description).toBe(`${MARKER} webhook`);
    expect((await call(app, 'GET', `/v1/inbox/${inboxUrl.body.id}`, { token: u.session })).body).toMatchObject({ url: `${site.origin}/${MARKER}`, title: `${MARKER} page title` });
  });

  it('a sealed value moved to another row (or another user) fails to open', async () => {
    const u = await registerUser(app);
    const a = await call(app, 'POST', '/v1/tags', { token: u.session, body: { name: 'Alpha' } });
    const b = await call(app, 'POST', '/v1/tags', { token: u.session, body: { name: 'Beta' } });
    const sqlite = app.deps.db.$client;
    const blobA = (sqlite.prepare('SELECT sealed FROM tags WHERE id = ?').get(a.body.id) as { sealed: Buffer }).sealed;
    sqlite.prepare('UPDATE tags SET sealed = ? WHERE id = ?').run(blobA, b.body.id);
    // The row does not open as Alpha's content: the API fails closed with a bare 500, never Alpha's name.
    const r = await call(app, 'GET', `/v1/tags/${b.body.id}`, { token: u.session });
    expectProblem(r, 500, 'internal');
    expect(r.text).not.toContain('Alpha');
    expect(r.body.detail).toBeUndefined();
    expect((await call(app, 'GET', `/v1/tags/${a.body.id}`, { token: u.session })).body.name).toBe('Alpha');

    // Moved to another user's row with the same id it fails too.
    const other = await registerUser(app);
    const c = await call(app, 'POST', '/v1/tags', { token: other.session, body: { name: 'Gamma' } });
    sqlite.prepare('UPDATE tags SET sealed = ? WHERE id = ?').run(blobA, c.body.id);
    expectProblem(await call(app, 'GET', `/v1/tags/${c.body.id}`, { token: other.session }), 500, 'internal');
  });

  it('a revoked credential can no longer unwrap the key', async () => {
    const u = await registerUser(app);
    const pat = await createPat(app, u.session, ['tags:read']);
    const secret = Buffer.from(pat.token.slice(PAT_PREFIX.length), 'base64url');
    const sqlite = app.deps.db.$client;
    const rowOf = () => sqlite.prepare('SELECT id, wrapped_key FROM credentials WHERE secret_hash = ?').get(sha256(secret)) as { id: string; wrapped_key: Buffer | null };
    const before = rowOf();
    const wrapped = before.wrapped_key!;
    expect(unwrapDataKey(credentialKek(secret, 'pat'), u.userId, wrapPurpose(before.id), wrapped)).toHaveLength(32);

    await call(app, 'DELETE', `/v1/keys/${pat.id}`, { token: u.session });
    expect(rowOf().wrapped_key).toBeNull();
    expectProblem(await call(app, 'GET', '/v1/tags', { token: pat.token }), 401, 'unauthorized');

    // Even a wrap kept from before (a backup) opens only the old key: after a key rotation the
    // old data key no longer opens anything.
    const oldDek = unwrapDataKey(credentialKek(secret, 'pat'), u.userId, wrapPurpose(before.id), wrapped);
    const tag = await call(app, 'POST', '/v1/tags', { token: u.session, body: { name: 'After' } });
    await call(app, 'POST', '/v1/auth/rotate-key', { token: u.session, body: { password: u.password } });
    const sealed = (sqlite.prepare('SELECT sealed FROM tags WHERE id = ?').get(tag.body.id) as { sealed: Buffer }).sealed;
    expect(() => open(oldDek, rowAad(u.userId, 'tags', tag.body.id), sealed)).toThrow(SealError);
  });

  it('credential secrets are stored only as SHA-256 hashes', async () => {
    const u = await registerUser(app);
    const pat = await createPat(app, u.session, ['tags:read']);
    const secretB64 = pat.token.slice(PAT_PREFIX.length);
    const secret = Buffer.from(secretB64, 'base64url');
    const f = dbFiles(app.dataDir);
    for (const file of f) {
      const bytes = readFileSync(file);
      expect(bytes.includes(secret)).toBe(false);
      expect(bytes.includes(Buffer.from(secretB64))).toBe(false);
    }
    expect(existsSync(path.join(app.dataDir, 'cairn.db'))).toBe(true);
  });
});
