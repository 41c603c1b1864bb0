// Spec §2.10, §4.15: weekStart is the only writable setting; platform blobs are never exposed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, createPat, expectProblem, registerUser } from '../helpers/http.js';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.close());

describe('settings', () => {
  it('defaults to monday, PATCH sets weekStart (required), and reads return it', async () => {
    const u = await registerUser(app);
    const token = (await createPat(app, u.session, ['settings:write'])).token;
    expect((await call(app, 'GET', '/v1/settings', { token })).body).toEqual({ weekStart: 'monday', updatedAt: null });
    const p = await call(app, 'PATCH', '/v1/settings', { token, body: { weekStart: 'sunday' } });
    expect(p.status).toBe(200);
    expect(p.body).toEqual({ weekStart: 'sunday', updatedAt: new Date(app.clock()).toISOString() });
    expect((await call(app, 'GET', '/v1/settings', { token })).body.weekStart).toBe('sunday');
    expect(expectProblem(await call(app, 'PATCH', '/v1/settings', { token, body: {} }), 422, 'validation_failed').errors?.[0]?.pointer).toBe('/weekStart');
    const extra = await call(app, 'PATCH', '/v1/settings', { token, body: { weekStart: 'monday', platform: { ios: 'x' } } });
    expect(expectProblem(extra, 422, 'validation_failed').errors?.[0]?.pointer).toBe('/platform');
  });

  it('platform blobs are stored (sealed) but never returned, over REST or tRPC', async () => {
    const u = await registerUser(app);
    await app.caller(u.session).settings.putPlatformBlob({ platform: 'macos', blob: 'opaque-state-123' });
    const rest = await call(app, 'GET', '/v1/settings', { token: u.session });
    expect(rest.text).not.toContain('opaque-state-123');
    expect(Object.keys(rest.body).sort()).toEqual(['updatedAt', 'weekStart']);
    const viaCaller = await app.caller(u.session).settings.get();
    expect(JSON.stringify(viaCaller)).not.toContain('opaque-state-123');
    // Writing weekStart keeps the blob (it is stored, just never shown).
    await call(app, 'PATCH', '/v1/settings', { token: u.session, body: { weekStart: 'friday' } });
    const row = app.deps.db.$client.prepare('SELECT sealed FROM settings WHERE user_id = ?').get(u.userId) as { sealed: Buffer };
    const { openJson, rowAad } = await import('../../core/crypto/seal.js');
    const principal = await (await import('../../routers/auth/credentials.js')).authenticate(app.deps, `Bearer ${u.session}`);
    expect(openJson<{ platform: Record<string, string> }>(principal.dek, rowAad(u.userId, 'settings', u.userId), row.sealed).platform).toEqual({ macos: 'opaque-state-123' });
    // Only first-party sessions may write them.
    const pat = (await createPat(app, u.session, ['settings:write'])).token;
    await expect(app.caller(pat).settings.putPlatformBlob({ platform: 'ios', blob: 'x' })).rejects.toMatchObject({ problemCode: 'forbidden_scope' });
  });

  it('reading needs settings:read, writing settings:write', async () => {
    const u = await registerUser(app);
    const reader = (await createPat(app, u.session, ['settings:read'])).token;
    expect((await call(app, 'GET', '/v1/settings', { token: reader })).status).toBe(200);
    expectProblem(await call(app, 'PATCH', '/v1/settings', { token: reader, body: { weekStart: 'monday' } }), 403, 'forbidden_scope');
  });
});
