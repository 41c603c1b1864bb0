// File attachments over HTTP (spec §4.9, DECISIONS §3, §4; issue 15): the raw upload and the
// streamed download, sealed 64 KiB chunks, bounded memory, tampering refused, 413 while
// streaming, aborted uploads, content types, parents, and key rotation.
import { createCipheriv, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { spawn } from 'node:child_process';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { readFileSync, readdirSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, expectProblem, registerUser } from '../helpers/http.js';
import { eventsOf } from '../../routers/events.js';
import { sweepUploads, STALE_UPLOAD_MS } from '../../routers/attachments/files.js';
import { limiterFor } from '../../routers/middleware/rate-limit.js';
import { credentialBucketKey } from '../../routers/auth/credentials.js';

let app: TestApp;
let token: string;
let userId: string;
const KIB = 1024;
const MIB = 1024 * KIB;

/** A full garbage collection on demand (so the heap samples count live memory, not garbage). */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** Uploads `size` bytes of AES-CTR keystream from a child process, or downloads and compares them (no big buffer on either side). */
function fromChild(o: { port: number; path: string; token: string; size: number; key: Buffer; iv: Buffer; download?: boolean }): Promise<{ status: number; body: any; probe: Buffer }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const script = `
    const http = require('node:http');
    const { createCipheriv } = require('node:crypto');
    const o = JSON.parse(process.argv[1]);
    const gen = createCipheriv('aes-256-ctr', Buffer.from(o.key, 'hex'), Buffer.from(o.iv, 'hex'));
    let probe = '';
    const req = o.download ? null : http.request({ port: o.port, host: '127.0.0.1', method: 'POST', path: o.path, headers: { authorization: 'Bearer ' + o.token, 'content-type': 'application/x-test-binary', 'content-length': o.size } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => process.stdout.write(JSON.stringify({ status: res.statusCode, body: JSON.parse(text), probe })));
    });
    let sent = 0;
    const pump = () => {
      while (sent < o.size) {
        const piece = gen.update(Buffer.alloc(Math.min(64 * 1024, o.size - sent)));
        if (sent === 5 * 1024 * 1024) probe = piece.subarray(0, 64).toString('hex');
        sent += piece.length;
        if (!req.write(piece)) return void req.once('drain', pump);
      }
      req.end();
    };
    if (o.download) {
      http.get({ port: o.port, host: '127.0.0.1', path: o.path, headers: { authorization: 'Bearer ' + o.token } }, (res) => {
        let length = 0;
        let same = true;
        res.on('data', (d) => {
          if (!gen.update(Buffer.alloc(d.length)).equals(d)) same = false;
          length += d.length;
        });
        res.on('end', () => process.stdout.write(JSON.stringify({ status: res.statusCode, body: { headers: res.headers, length, same }, probe })));
      });
    } else pump();
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script, JSON.stringify({ ...o, key: o.key.toString('hex'), iv: o.iv.toString('hex') })], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', () => {
      try {
        const r = JSON.parse(out) as { status: number; body: unknown; probe: string };
        resolve({ ...r, probe: Buffer.from(r.probe, 'hex') });
      } catch (e) {
        reject(e);
      }
    });
  });
}

const sqlite = () => app.deps.db.$client;
const count = (table: string, where = '1', ...args: unknown[]) => (sqlite().prepare(`SELECT count(*) AS n FROM "${table}" WHERE ${where}`).get(...args) as { n: number }).n;

async function todo(t = token) {
  const r = await call(app, 'POST', '/v1/todos', { token: t, body: { title: 'holder' } });
  expect(r.status).toBe(201);
  return r.body.id as string;
}

async function upload(bytes: Uint8Array, opts: { parentId: string; parentType?: string; type?: string; title?: string; t?: string }) {
  const q = new URLSearchParams({ parentType: opts.parentType ?? 'todo', parentId: opts.parentId, ...(opts.title ? { title: opts.title } : {}) });
  const res = await fetch(`${app.url}/v1/attachments/files?${q}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${opts.t ?? token}`, ...(opts.type ? { 'content-type': opts.type } : {}) },
    body: bytes,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined };
}

async function download(id: string, t = token) {
  const res = await fetch(`${app.url}/v1/attachments/${id}/file`, { headers: { authorization: `Bearer ${t}` } });
  return { res, bytes: Buffer.from(await res.arrayBuffer()) };
}

beforeAll(async () => {
  app = await startApp();
  const u = await registerUser(app);
  token = u.session;
  userId = u.userId;
});
afterAll(() => app.close());

describe('file attachments', () => {
  it('a 10 MiB binary file round-trips byte for byte, with bounded heap, and its bytes are not in the DB file or WAL', async () => {
    const t = await todo();
    const size = 10 * MIB;
    // The file is a keystream (AES-CTR over zeros): generated while it is sent, regenerated while
    // it comes back, so neither side of the test holds 10 MiB and the measurement sees the server.
    const key = randomBytes(32);
    const iv = randomBytes(16);
    const port = Number(new URL(app.url).port);
    let probe: Buffer = Buffer.alloc(0);

    const gc = collector();
    gc();
    const base = process.memoryUsage();
    let peak = 0;
    // Buffers freed by a collection are released by V8's sweeper a little later, so one reading
    // can count garbage: each sample is the least of three readings, each after a collection and a
    // pause. Memory the server really holds (a buffered file) stays in every reading.
    let sampling = false;
    const sample = async () => {
      if (sampling) return;
      sampling = true;
      let least = Infinity;
      for (let i = 0; i < 3; i++) {
        gc();
        await new Promise((r) => setTimeout(r, 3));
        gc();
        const m = process.memoryUsage();
        least = Math.min(least, m.heapUsed - base.heapUsed + (m.arrayBuffers - base.arrayBuffers));
      }
      peak = Math.max(peak, least);
      sampling = false;
    };
    const timer = setInterval(() => void sample(), 25);
    try {
      // The client runs in a child process, so what is measured here is the server alone.
      const up = await fromChild({ port, path: `/v1/attachments/files?parentType=todo&parentId=${t}&title=blob`, token, size, key, iv });
      probe = up.probe;
      expect(up.status, JSON.stringify(up.body)).toBe(201);
      expect(up.body).toMatchObject({ kind: 'file', parentType: 'todo', parentId: t, title: 'blob', size, contentType: 'application/x-test-binary', url: null, text: null });
      expect(count('attachment_chunks', 'attachment_id = ?', up.body.id)).toBe(160);

      const down = await fromChild({ port, path: `/v1/attachments/${up.body.id}/file`, token, size, key, iv, download: true });
      const got = { status: down.status, ...(down.body as { headers: Record<string, unknown>; length: number; same: boolean }) };
      await sample();
      expect(got.status).toBe(200);
      expect(got.headers['content-length']).toBe(String(size));
      expect(got.headers['content-type']).toBe('application/octet-stream'); // not a known passive type
      expect(got.headers['x-content-type-options']).toBe('nosniff');
      expect(got.length).toBe(size);
      expect(got.same).toBe(true);
      // Upload and download together never held more than a few chunks at once.
      expect(peak).toBeLessThan(4 * MIB);
      expect(probe.length).toBe(64);

      // A readable marker file too: plaintext that would show up verbatim.
      const marker = Buffer.from('FileMarkerQ7wZebra '.repeat(4000));
      const m = await upload(marker, { parentId: t, type: 'text/plain' });
      expect(m.status).toBe(201);
      expect((await download(m.body.id)).bytes.equals(marker)).toBe(true);
      const files = readdirSync(app.dataDir).filter((f) => f.startsWith('cairn.db')).map((f) => path.join(app.dataDir, f));
      expect(files.some((f) => f.endsWith('-wal'))).toBe(true);
      for (const f of files) {
        const disk = readFileSync(f);
        expect(disk.includes(probe), `${path.basename(f)} holds file bytes`).toBe(false);
        expect(disk.includes(Buffer.from('FileMarkerQ7wZebra')), `${path.basename(f)} holds the marker`).toBe(false);
        expect(disk.includes(Buffer.from('application/x-test-binary')), `${path.basename(f)} holds the content type`).toBe(false);
      }
      const types = eventsOf(app.deps.db, userId).filter((e) => e.data.id === up.body.id).map((e) => e.type);
      expect(types).toEqual(['attachment.created']);
    } finally {
      clearInterval(timer);
    }
  });

  it('empty files and sizes on chunk boundaries round-trip', async () => {
    const t = await todo();
    for (const n of [0, 1, 64 * KIB - 1, 64 * KIB, 64 * KIB + 1, 128 * KIB]) {
      const bytes = randomBytes(n);
      const up = await upload(bytes, { parentId: t });
      expect(up.status, up.text).toBe(201);
      expect(up.body.size).toBe(n);
      expect(up.body.contentType).toBe('application/octet-stream');
      const d = await download(up.body.id);
      expect(d.bytes.equals(bytes), `size ${n}`).toBe(true);
      expect(count('attachment_chunks', 'attachment_id = ?', up.body.id)).toBe(Math.max(1, Math.ceil(n / (64 * KIB))));
    }
  });

  it('the file route reads only file attachments; the JSON routes show and patch the file attachment', async () => {
    const t = await todo();
    const text = await call(app, 'POST', '/v1/attachments', { token, body: { parentType: 'todo', parentId: t, kind: 'text', text: 'words' } });
    expectProblem(await call(app, 'GET', `/v1/attachments/${text.body.id}/file`, { token }), 404, 'not_found');
    expectProblem(await call(app, 'GET', '/v1/attachments/0A1B2C3D-0000-4000-8000-00000000000A/file', { token }), 404, 'not_found');
    expect(expectProblem(await call(app, 'GET', '/v1/attachments/nope/file', { token }), 422, 'validation_failed').errors?.[0]?.pointer).toBe('/id');
    const up = await upload(Buffer.from('hello'), { parentId: t, type: 'text/plain; charset=utf-8' });
    const g = await call(app, 'GET', `/v1/attachments/${up.body.id}`, { token });
    expect(g.body).toMatchObject({ kind: 'file', size: 5, contentType: 'text/plain; charset=utf-8' });
    const p = await call(app, 'PATCH', `/v1/attachments/${up.body.id}`, { token, body: { title: 'renamed' } });
    expect(p.body).toMatchObject({ title: 'renamed', kind: 'file', size: 5 });
    expect(expectProblem(await call(app, 'PATCH', `/v1/attachments/${up.body.id}`, { token, body: { text: 'x' } }), 422, 'validation_failed').errors?.[0]?.pointer).toBe('/text');
    expect((await download(up.body.id)).bytes.toString()).toBe('hello');
    // Another user's file is not found.
    const other = await registerUser(app);
    expectProblem(await call(app, 'GET', `/v1/attachments/${up.body.id}/file`, { token: other.session }), 404, 'not_found');
  });

  it('active content is served as application/octet-stream with Content-Disposition: attachment', async () => {
    const t = await todo();
    const cases: [string, string, boolean][] = [
      ['text/html', 'application/octet-stream', true],
      ['text/html; charset=utf-8', 'application/octet-stream', true],
      ['image/svg+xml', 'application/octet-stream', true],
      ['application/xhtml+xml', 'application/octet-stream', true],
      ['text/xml', 'application/octet-stream', true],
      ['application/javascript', 'application/octet-stream', true],
      ['text/javascript', 'application/octet-stream', true],
      ['application/x-unknown', 'application/octet-stream', true],
      ['image/png', 'image/png', false],
      ['text/plain', 'text/plain', false],
      ['application/pdf', 'application/pdf', false],
    ];
    for (const [sent, served, attachment] of cases) {
      const up = await upload(Buffer.from('<script>alert(1)</script>'), { parentId: t, type: sent });
      expect(up.status, sent).toBe(201);
      expect(up.body.contentType).toBe(sent);
      const { res } = await download(up.body.id);
      expect(res.headers.get('content-type'), sent).toBe(served);
      expect(res.headers.get('content-disposition'), sent).toBe(attachment ? 'attachment' : null);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
    const bad = await upload(Buffer.from('x'), { parentId: t, type: 'not a type' });
    expect(bad.status).toBe(422);
  });

  it('a chunk swapped, moved between files, or cut off is refused: 500 before headers, else the connection is cut', async () => {
    const t = await todo();
    const a = await upload(randomBytes(300 * KIB), { parentId: t });
    const b = await upload(randomBytes(300 * KIB), { parentId: t });
    const chunk = (id: string, idx: number) => sqlite().prepare('SELECT sealed FROM attachment_chunks WHERE attachment_id = ? AND idx = ?').pluck().get(id, idx) as Buffer;
    const setChunk = (id: string, idx: number, sealed: Buffer) => sqlite().prepare('UPDATE attachment_chunks SET sealed = ? WHERE attachment_id = ? AND idx = ?').run(sealed, id, idx);

    // The first chunk of another file: found before any header goes out.
    const a0 = chunk(a.body.id, 0);
    setChunk(a.body.id, 0, chunk(b.body.id, 0));
    expectProblem(await call(app, 'GET', `/v1/attachments/${a.body.id}/file`, { token }), 500, 'internal');
    setChunk(a.body.id, 0, a0);
    expect((await download(a.body.id)).res.status).toBe(200);

    // Cut short: the last chunk removed (the count no longer fits the size).
    const last = chunk(b.body.id, 4);
    sqlite().prepare('DELETE FROM attachment_chunks WHERE attachment_id = ? AND idx = 4').run(b.body.id);
    expectProblem(await call(app, 'GET', `/v1/attachments/${b.body.id}/file`, { token }), 500, 'internal');
    // Cut short and the count made to fit: the new last chunk was not sealed as last.
    sqlite().prepare('DELETE FROM attachment_chunks WHERE attachment_id = ? AND idx = 3').run(b.body.id);
    sqlite().prepare('INSERT INTO attachment_chunks (attachment_id, idx, user_id, sealed) VALUES (?, 3, ?, ?)').run(b.body.id, userId, chunk(b.body.id, 2));
    sqlite().prepare('INSERT INTO attachment_chunks (attachment_id, idx, user_id, sealed) VALUES (?, 4, ?, ?)').run(b.body.id, userId, last);
    // Chunks 2 and 3 now hold the same seal: chunk 3 fails once the stream is under way.
    const r = await fetch(`${app.url}/v1/attachments/${b.body.id}/file`, { headers: { authorization: `Bearer ${token}` } });
    expect(r.status).toBe(200);
    await expect(r.arrayBuffer()).rejects.toThrow();

    // Two chunks of one file swapped, further in: the connection is destroyed mid-stream.
    const a2 = chunk(a.body.id, 2);
    setChunk(a.body.id, 2, chunk(a.body.id, 3));
    setChunk(a.body.id, 3, a2);
    const s = await fetch(`${app.url}/v1/attachments/${a.body.id}/file`, { headers: { authorization: `Bearer ${token}` } });
    expect(s.status).toBe(200);
    await expect(s.arrayBuffer()).rejects.toThrow();
  });

  it('a body over the limit is refused with 413 while it streams: answered before the client finished sending', async () => {
    const small = await startApp({ CAIRN_MAX_UPLOAD_BYTES: String(100 * KIB) });
    try {
      const u = await registerUser(small);
      const t = (await call(small, 'POST', '/v1/todos', { token: u.session, body: { title: 'x' } })).body.id as string;
      // Chunked, so no Content-Length gives the size away: the server must count.
      const total = 8 * MIB;
      const { answer, sent } = await new Promise<{ answer: string; sent: number }>((resolve, reject) => {
        const sock = connect(Number(new URL(small.url).port), '127.0.0.1');
        let answer = '';
        let sent = 0;
        let done = false;
        const finish = () => {
          if (done) return;
          done = true;
          sock.destroy();
          resolve({ answer, sent });
        };
        sock.on('data', (d) => {
          answer += d.toString('latin1');
          if (answer.includes('\r\n\r\n') && answer.includes('}')) finish();
        });
        sock.on('error', finish);
        sock.on('close', finish);
        sock.on('connect', async () => {
          sock.write(`POST /v1/attachments/files?parentType=todo&parentId=${t} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${u.session}\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n`);
          const piece = Buffer.alloc(16 * KIB, 7);
          while (!done && sent < total) {
            sock.write(`${piece.length.toString(16)}\r\n`);
            sock.write(piece);
            sock.write('\r\n');
            sent += piece.length;
            await new Promise((r) => setTimeout(r, 2));
          }
          if (!done) sock.write('0\r\n\r\n');
        });
        setTimeout(() => reject(new Error('no answer')), 20_000);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 413 /);
      expect(answer).toContain('payload_too_large');
      expect(sent).toBeLessThan(total);
      expect(sent).toBeLessThan(2 * MIB);
      const db = small.deps.db.$client;
      expect((db.prepare('SELECT count(*) AS n FROM attachment_chunks').get() as { n: number }).n).toBe(0);
      expect((db.prepare('SELECT count(*) AS n FROM pending_uploads').get() as { n: number }).n).toBe(0);
      expect((db.prepare('SELECT count(*) AS n FROM attachments').get() as { n: number }).n).toBe(0);
      // A declared Content-Length over the limit is refused before a byte is read.
      const declared = await fetch(`${small.url}/v1/attachments/files?parentType=todo&parentId=${t}`, { method: 'POST', headers: { authorization: `Bearer ${u.session}` }, body: Buffer.alloc(100 * KIB + 1) });
      expect(declared.status).toBe(413);
      // At the limit exactly it passes.
      const ok = await fetch(`${small.url}/v1/attachments/files?parentType=todo&parentId=${t}`, { method: 'POST', headers: { authorization: `Bearer ${u.session}` }, body: Buffer.alloc(100 * KIB) });
      expect(ok.status).toBe(201);
    } finally {
      await small.close();
    }
  });

  it('an aborted upload leaves no attachment, no chunks and no staging row', async () => {
    const t = await todo();
    const before = count('attachments');
    const sock = connect(Number(new URL(app.url).port), '127.0.0.1');
    await new Promise<void>((r) => sock.on('connect', () => r()));
    sock.write(`POST /v1/attachments/files?parentType=todo&parentId=${t} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Length: ${4 * MIB}\r\n\r\n`);
    sock.write(Buffer.alloc(512 * KIB, 1));
    // Staged chunks appear while the body streams…
    const deadline = Date.now() + 5000;
    while (count('attachment_chunks', 'attachment_id IN (SELECT id FROM pending_uploads)') === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(count('pending_uploads')).toBe(1);
    expect(count('attachment_chunks', 'attachment_id IN (SELECT id FROM pending_uploads)')).toBeGreaterThan(0);
    expect((await call(app, 'GET', `/v1/attachments?parent_id=${t}`, { token })).body.data).toEqual([]);
    // …and go when the client goes.
    sock.destroy();
    while (count('pending_uploads') > 0 && Date.now() < deadline + 5000) await new Promise((r) => setTimeout(r, 10));
    expect(count('pending_uploads')).toBe(0);
    expect(count('attachment_chunks', 'attachment_id NOT IN (SELECT id FROM attachments)')).toBe(0);
    expect(count('attachments')).toBe(before);
  });

  it('the sweep removes uploads a crash left staged', async () => {
    const t = await todo();
    const good = await upload(Buffer.from('kept'), { parentId: t });
    sqlite().prepare('INSERT INTO pending_uploads (id, user_id, started_at) VALUES (?, ?, ?)').run('STALE', userId, app.clock());
    sqlite().prepare('INSERT INTO attachment_chunks (attachment_id, idx, user_id, sealed) VALUES (?, 0, ?, ?)').run('STALE', userId, Buffer.from('x'));
    expect(sweepUploads(app.deps)).toBe(0);
    app.clock.advance(STALE_UPLOAD_MS + 1);
    expect(sweepUploads(app.deps)).toBe(1);
    expect(count('attachment_chunks', "attachment_id = 'STALE'")).toBe(0);
    expect((await download(good.body.id)).bytes.toString()).toBe('kept');
  });

  it('parent checks, query checks and scopes', async () => {
    const other = await registerUser(app);
    const theirs = await todo(other.session);
    const mine = await todo();
    const r = await upload(Buffer.from('x'), { parentId: theirs });
    expect(expectProblem({ ...r, headers: r.headers }, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/parentId');
    // A to-do id given as an inbox item is not one.
    const inbox = await upload(Buffer.from('x'), { parentId: mine, parentType: 'inbox' });
    expect(expectProblem(inbox, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/parentId');
    const bogus = await upload(Buffer.from('x'), { parentId: mine, parentType: 'note' });
    expect(expectProblem(bogus, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/parentType');
    const title = await upload(Buffer.from('x'), { parentId: mine, title: 't'.repeat(513) });
    expect(expectProblem(title, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/title');
    const extra = await fetch(`${app.url}/v1/attachments/files?parentType=todo&parentId=${mine}&zzz=1`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: 'x' });
    expect(extra.status).toBe(422);
    expect(count('pending_uploads')).toBe(0);

    const noAuth = await fetch(`${app.url}/v1/attachments/files?parentType=todo&parentId=${mine}`, { method: 'POST', body: 'x' });
    expect(noAuth.status).toBe(401);
    expect(noAuth.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const reader = (await createPat(app, token, ['attachments:read'])).token;
    const writer = (await createPat(app, token, ['attachments:write'])).token;
    expectProblem(await upload(Buffer.from('x'), { parentId: mine, t: reader }), 403, 'forbidden_scope');
    const w = await upload(Buffer.from('by writer'), { parentId: mine, t: writer });
    expect(w.status).toBe(201);
    const todosOnly = (await createPat(app, token, ['todos:read'])).token;
    expectProblem(await call(app, 'GET', `/v1/attachments/${w.body.id}/file`, { token: todosOnly }), 403, 'forbidden_scope');
    expect((await download(w.body.id, reader)).bytes.toString()).toBe('by writer');
    // Another method at these paths is 405 with Allow.
    const put = await call(app, 'PUT', `/v1/attachments/${w.body.id}/file`, { token });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET');
  });

  it('the file routes count against the per-credential buckets of /v1 (the upload also against the write bucket)', async () => {
    const t = await todo();
    const limiter = limiterFor(app.deps);
    const subject = credentialBucketKey(`Bearer ${token}`)!;
    const left = () => {
      const [all, writes] = limiter.hit([{ name: 'credential', subject }, { name: 'credentialWrites', subject }], { peek: true });
      return { all: all!.remaining, writes: writes!.remaining };
    };
    const start = left();
    const up = await upload(Buffer.from('counted'), { parentId: t });
    expect(up.status).toBe(201);
    const afterUpload = left();
    expect(afterUpload).toEqual({ all: start.all - 1, writes: start.writes - 1 });
    expect((await download(up.body.id)).res.status).toBe(200);
    expect(left()).toEqual({ all: afterUpload.all - 1, writes: afterUpload.writes });
    // The same buckets a /v1 procedure spends.
    await call(app, 'GET', `/v1/attachments/${up.body.id}`, { token });
    expect(left()).toEqual({ all: afterUpload.all - 2, writes: afterUpload.writes });
  });

  it('a spent credential bucket refuses the file routes with 429', async () => {
    const limited = await startApp({ CAIRN_RATE_LIMIT_FACTOR: '1' });
    try {
      const u = await registerUser(limited);
      const subject = credentialBucketKey(`Bearer ${u.session}`)!;
      const limiter = limiterFor(limited.deps);
      // Spend the bucket as 600 requests would.
      while (limiter.hit([{ name: 'credential', subject }], { peek: true })[0]!.remaining > 0) limiter.hit([{ name: 'credential', subject }]);
      const r = await call(limited, 'GET', '/v1/attachments/0A1B2C3D-0000-4000-8000-00000000000A/file', { token: u.session });
      expectProblem(r, 429, 'rate_limited');
      expect(r.headers.get('retry-after')).toBeTruthy();
      const w = await fetch(`${limited.url}/v1/attachments/files?parentType=todo&parentId=X`, { method: 'POST', headers: { authorization: `Bearer ${u.session}` }, body: 'x' });
      expect(w.status).toBe(429);
    } finally {
      await limited.close();
    }
  });

  it('deleting the attachment or its parent removes the bytes in the same transaction', async () => {
    const t = await todo();
    const a = await upload(randomBytes(200 * KIB), { parentId: t });
    expect(count('attachment_chunks', 'attachment_id = ?', a.body.id)).toBe(4);
    expect((await call(app, 'DELETE', `/v1/attachments/${a.body.id}`, { token })).status).toBe(204);
    expect(count('attachment_chunks', 'attachment_id = ?', a.body.id)).toBe(0);
    const b = await upload(randomBytes(70 * KIB), { parentId: t });
    const p = await call(app, 'POST', '/v1/containers', { token, body: { kind: 'project', name: 'p' } });
    const c = await upload(randomBytes(70 * KIB), { parentId: p.body.id, parentType: 'container' });
    expect((await call(app, 'DELETE', `/v1/todos/${t}`, { token })).status).toBe(204);
    expect(count('attachments', 'id = ?', b.body.id)).toBe(0);
    expect(count('attachment_chunks', 'attachment_id = ?', b.body.id)).toBe(0);
    await call(app, 'POST', `/v1/containers/${p.body.id}/trash`, { token });
    expect((await call(app, 'POST', '/v1/trash/empty', { token })).status).toBe(200);
    expect(count('attachment_chunks', 'attachment_id = ?', c.body.id)).toBe(0);
    expectProblem(await call(app, 'GET', `/v1/attachments/${c.body.id}/file`, { token }), 404, 'not_found');
  });

  it('key rotation re-seals the file chunks in its transaction: files stay readable under the new key', async () => {
    const u = await registerUser(app);
    const t = await todo(u.session);
    const bytes = randomBytes(150 * KIB);
    const a = await upload(bytes, { parentId: t, t: u.session });
    const before = sqlite().prepare('SELECT sealed FROM attachment_chunks WHERE attachment_id = ? ORDER BY idx').pluck().all(a.body.id) as Buffer[];
    const rot = await call(app, 'POST', '/v1/auth/rotate-key', { token: u.session, body: { password: u.password } });
    expect(rot.status, rot.text).toBe(200);
    const after = sqlite().prepare('SELECT sealed FROM attachment_chunks WHERE attachment_id = ? ORDER BY idx').pluck().all(a.body.id) as Buffer[];
    expect(after).toHaveLength(before.length);
    for (let i = 0; i < after.length; i++) expect(after[i]!.equals(before[i]!)).toBe(false);
    const d = await download(a.body.id, rot.body.token);
    expect(d.res.status).toBe(200);
    expect(d.bytes.equals(bytes)).toBe(true);
  });
});
