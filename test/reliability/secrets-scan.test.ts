// Issue 18.5: secrets and content never leak. The real server process runs at LOG_LEVEL=debug
// through a workload that touches every resource (test/helpers/resources.ts), every credential
// operation, search, and invalid requests that carry secrets and content in the wrong places.
// Then every log line it printed and every file under DATA_DIR (the SQLite file, its WAL and
// shared memory, uploads, whatever else is there) is scanned for the passwords, tokens and
// content markers in plaintext, base64 (standard and URL-safe, at every byte alignment), hex
// (both cases) and URL encoding (percent and form). Zero hits: the content is only in sealed
// blobs (ciphertext), the credentials only as hashes.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from '../helpers/process.js';
import { call } from '../helpers/http.js';
import { createEveryResource, fullUser, hookPath, WEBHOOK_TARGET } from '../helpers/resources.js';
import { selfSignedCert } from '../helpers/tls.js';
import { receiver, until, type Receiver } from '../webhooks/receiver.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'cairn-secrets-'));
let server: ServerProcess | undefined;
let hooks: Receiver | undefined;
afterAll(async () => {
  await server?.stop();
  await hooks?.close();
  WEBHOOK_TARGET.base = 'https://127.0.0.1:9';
  rmSync(dataDir, { recursive: true, force: true });
});

/** Every encoding of `s` the scan looks for (each at least 8 bytes long). */
export function encodings(s: string): { how: string; bytes: Buffer }[] {
  const raw = Buffer.from(s, 'utf8');
  const out: { how: string; bytes: Buffer }[] = [{ how: 'plain', bytes: raw }];
  for (let k = 0; k < 3; k++) {
    // base64 of the secret starting at byte offset k of a 3-byte group: the characters that
    // depend only on the secret's bytes.
    const enc = Buffer.concat([Buffer.alloc(k), raw]).toString('base64');
    const from = Math.ceil((k * 4) / 3) + (k ? 1 : 0);
    const inner = enc.slice(from, enc.length - 4);
    if (inner.length >= 8) {
      out.push({ how: `base64@${k}`, bytes: Buffer.from(inner) });
      out.push({ how: `base64url@${k}`, bytes: Buffer.from(inner.replace(/\+/g, '-').replace(/\//g, '_')) });
    }
  }
  out.push({ how: 'hex', bytes: Buffer.from(raw.toString('hex')) }, { how: 'HEX', bytes: Buffer.from(raw.toString('hex').toUpperCase()) });
  const pct = encodeURIComponent(s);
  if (pct !== s) out.push({ how: 'percent', bytes: Buffer.from(pct) }, { how: 'form', bytes: Buffer.from(pct.replace(/%20/g, '+')) });
  return out;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

function scan(secrets: Record<string, string>, logs: string): string[] {
  const hits: string[] = [];
  const haystacks: [string, Buffer][] = [['the log', Buffer.from(logs)], ...filesUnder(dataDir).map((f) => [path.relative(dataDir, f), readFileSync(f)] as [string, Buffer])];
  for (const [name, secret] of Object.entries(secrets)) {
    for (const { how, bytes } of encodings(secret)) {
      for (const [where, hay] of haystacks) if (hay.includes(bytes)) hits.push(`${name} (${how}) in ${where}`);
    }
  }
  return hits;
}

describe('secrets and content never leak (issue 18.5)', () => {
  it('no password, token or content marker in the debug log or in any file under DATA_DIR, in any common encoding', async () => {
    // Webhook deliveries go to a loopback HTTPS receiver (the process's own dispatcher sends them).
    const cert = selfSignedCert();
    hooks = await receiver(cert, 200);
    WEBHOOK_TARGET.base = `https://127.0.0.1:${hooks.port}`;
    server = await startServerProcess(dataDir, { LOG_LEVEL: 'debug', NODE_EXTRA_CA_CERTS: cert.certPath, CAIRN_UNSAFE_ALLOW_LOOPBACK: '1' });
    const s = server;
    const MARK = 'Qv8marker content';
    const a = await fullUser(s);
    const b = await fullUser(s);
    // Every resource, a webhook subscription and a whole OAuth flow (register, authorize page,
    // approval, code exchange) among them.
    const aIds = await createEveryResource(s, a, MARK);
    const flow = a.oauth!;
    const form = (f: Record<string, string>) => ({ rawBody: new URLSearchParams(f).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    // The OAuth tokens at work, and in the wrong places: a refresh, an access token used, a code
    // redeemed twice (which revokes the grant), a bad client secret, a refresh token as a Bearer.
    const me = await call(s, 'GET', '/v1/me', { token: flow.access });
    expect(me.status).toBe(200);
    const refreshed = await call(s, 'POST', '/oauth/token', form({ grant_type: 'refresh_token', refresh_token: flow.refresh, client_id: flow.clientId, client_secret: flow.clientSecret }));
    expect(refreshed.status, refreshed.text).toBe(200);
    await call(s, 'POST', '/oauth/token', form({ grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token, client_id: flow.clientId, client_secret: `${flow.clientSecret}x` }));
    await call(s, 'GET', '/v1/todos', { token: refreshed.body.refresh_token });
    await call(s, 'GET', `/v1/approvals/${flow.userCode}`, { token: a.session });
    await call(s, 'POST', '/oauth/authorize/wait', form({ handle: flow.handle }));
    await call(s, 'POST', '/oauth/token', form({ grant_type: 'authorization_code', code: flow.code, code_verifier: flow.verifier, client_id: flow.clientId, client_secret: flow.clientSecret, redirect_uri: 'http://127.0.0.1:9/callback' }));
    // The webhook: its secret rotated (a second secret), and deliveries actually sent and answered.
    const rot = await call(s, 'POST', `/v1/webhooks/${aIds.webhooks}/rotate-secret`, { token: a.pat });
    expect(rot.status, rot.text).toBe(200);
    for (let i = 0; i < 3; i++) expect((await call(s, 'POST', '/v1/tags', { token: a.pat, body: { name: `hooked ${MARK} ${i}` } })).status).toBe(201);
    // The ping and the three tag.created events, delivered (the subscription was made after the
    // other resources' events had been fanned out, so they are not its).
    await until(() => hooks!.got.filter((g) => g.path === hookPath(MARK) && g.answered === 200).length >= 4, 20_000);
    const newPassword = 'Zt5 new passphrase for rotation';
    const login = await call(s, 'POST', '/v1/auth/login', { body: { email: a.email, password: a.password } });
    expect(login.status).toBe(200);
    // Secrets and content where they do not belong: queries, wrong fields, bad credentials.
    await call(s, 'GET', `/v1/search?q=${encodeURIComponent(MARK)}`, { token: a.pat });
    await call(s, 'GET', `/v1/todos?parent_id=${encodeURIComponent(MARK)}`, { token: a.pat });
    await call(s, 'POST', '/v1/todos', { token: a.pat, body: { title: 42, notes: MARK, password: a.password } });
    await call(s, 'POST', '/v1/auth/login', { body: { email: a.email, password: `${a.password}x` } });
    await call(s, 'POST', '/v1/auth/login', { body: { email: `${MARK}@example.test`, password: a.password } });
    await call(s, 'GET', '/v1/todos', { headers: { authorization: `Bearer ${a.pat}x` } });
    await call(s, 'GET', '/v1/todos', { headers: { authorization: `Basic ${Buffer.from(`${a.email}:${a.password}`).toString('base64')}` } });
    await call(s, 'POST', '/v1/inbox', { token: a.pat, body: { kind: 'url', url: `https://example.invalid/${encodeURIComponent(MARK)}` } });
    await call(s, 'POST', '/v1/notes', { token: a.pat, rawBody: `{"body": "${MARK}`, headers: { 'content-type': 'application/json' } });
    // (Not probed: content put where an id goes. The access log records the path, ids included,
    // never the query string: docs/reliability.md.)
    await call(s, 'POST', `/v1/todos/${a.userId}/complete`, { token: b.pat, body: { today: MARK } });
    const changed = await call(s, 'POST', '/v1/auth/password', { token: login.body.token, body: { currentPassword: a.password, newPassword } });
    const rotated = await call(s, 'POST', '/v1/auth/rotate-key', { token: a.session, body: { password: changed.status === 200 ? newPassword : a.password } });
    const secrets: Record<string, string> = {
      'A password': a.password,
      'A new password': newPassword,
      'B password': b.password,
      'A session': a.session,
      'A login session': login.body.token,
      'A PAT': a.pat,
      'B PAT': b.pat,
      'B session': b.session,
      'content marker': MARK,
      'content marker (no space)': 'Qv8marker',
      ...(typeof changed.body?.token === 'string' ? { 'session after password change': changed.body.token } : {}),
      ...(typeof rotated.body?.token === 'string' ? { 'session after rotation': rotated.body.token } : {}),
      'webhook secret': a.webhook!.secret,
      'webhook secret after rotation': rot.body.secret,
      'webhook URL path marker': hookPath(MARK),
      'OAuth client secret': flow.clientSecret,
      'OAuth authorization code': flow.code,
      'OAuth PKCE verifier': flow.verifier,
      'OAuth access token': flow.access,
      'OAuth refresh token': flow.refresh,
      'OAuth access token after refresh': refreshed.body.access_token,
      'OAuth refresh token after refresh': refreshed.body.refresh_token,
      'approval code (nine digits)': flow.userCode,
      'authorize page handle': flow.handle,
    };
    // The WAL and the log as they are while the server runs...
    const running = scan(secrets, s.output());
    // ...and after a clean stop (checkpointed into cairn.db).
    await s.stop();
    const stopped = scan(secrets, s.output());
    // The server logs nothing at debug level today (no log.debug call): what is scanned is every
    // line it wrote at its most verbose, access lines included.
    expect(s.output().split('\n').filter((l) => l.includes('/v1/')).length, 'access lines were logged').toBeGreaterThan(20);
    expect(filesUnder(dataDir).length).toBeGreaterThan(1);
    expect([...running, ...stopped]).toEqual([]);
  }, 60_000);

  it('the scan finds what it looks for (each encoding, in a file and in a line)', () => {
    const secret = 'tok_abc123 DEF/+=';
    for (const { how, bytes } of encodings(secret)) {
      const line = `prefix ${bytes.toString()} suffix`;
      expect(scan({ [how]: secret }, line).length, how).toBeGreaterThan(0);
    }
    // Base64 at each alignment inside a longer value.
    for (const pre of ['', 'a', 'ab']) expect(scan({ s: secret }, Buffer.from(pre + secret).toString('base64')).length, pre).toBeGreaterThan(0);
  });
});
