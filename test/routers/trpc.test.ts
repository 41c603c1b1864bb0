// /trpc for first-party TypeScript apps: a real @trpc/client over HTTP with superjson, and the
// procedures called in-process (createCaller) with the same rules as REST.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import superjson from 'superjson';
import type { AppRouter } from '../../routers/index.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { createPat, registerUser } from '../helpers/http.js';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.close());

const client = (token?: string) =>
  createTRPCClient<AppRouter>({
    links: [httpLink({ url: `${app.url}/trpc`, transformer: superjson, headers: () => (token ? { authorization: `Bearer ${token}` } : {}) })],
  });

describe('tRPC over HTTP', () => {
  it('registers, creates a tag and lists it with a typed client', async () => {
    const reg = await client().auth.register.mutate({ email: 'trpc@example.test', password: 'typed client pw' });
    const c = client(reg.token);
    const tag = await c.tags.create.mutate({ name: 'Typed' });
    expect(tag.name).toBe('Typed');
    const list = await c.tags.list.query({ limit: 10 });
    expect(list.data.map((t) => t.id)).toEqual([tag.id]);
    const me = await c.me.get.query();
    expect(me.sub).toBe(reg.user.id);
  });

  it('errors carry the same problem object as REST, under data.problem', async () => {
    const u = await registerUser(app);
    const pat = await createPat(app, u.session, ['tags:read']);
    const err = await client(pat.token).tags.create.mutate({ name: 'x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TRPCClientError);
    const data = (err as TRPCClientError<AppRouter>).data as { httpStatus: number; problem: { type: string; status: number } };
    expect(data.httpStatus).toBe(403);
    expect(data.problem).toMatchObject({ type: `${app.deps.config.publicUrl}/errors/forbidden_scope`, status: 403 });
    const bad = await client(pat.token).tags.list.query({ limit: 0 }).catch((e: unknown) => e);
    const problem = ((bad as TRPCClientError<AppRouter>).data as { problem: { type: string; errors: { pointer: string }[] } }).problem;
    expect(problem.type).toBe(`${app.deps.config.publicUrl}/errors/validation_failed`);
    expect(problem.errors[0]!.pointer).toBe('/limit');
    const anon = await client().me.get.query().catch((e: unknown) => e);
    expect(((anon as TRPCClientError<AppRouter>).data as { httpStatus: number }).httpStatus).toBe(401);
  });
});

describe('procedures in-process (createCaller)', () => {
  it('enforce scopes and first-party rules exactly as over HTTP', async () => {
    const u = await registerUser(app);
    const pat = await createPat(app, u.session, ['tags:read']);
    await expect(app.caller(pat.token).tags.create({ name: 'no' })).rejects.toMatchObject({ problemCode: 'forbidden_scope' });
    await expect(app.caller(pat.token).keys.create({ name: 'k', scopes: ['tags:read'], expiresInDays: 30 })).rejects.toMatchObject({ problemCode: 'forbidden_scope' });
    await expect(app.caller().tags.list({})).rejects.toMatchObject({ problemCode: 'unauthorized' });
    await expect(app.caller('cairn_pat_' + 'x'.repeat(43)).me.get()).rejects.toMatchObject({ problemCode: 'unauthorized' });
  });

  it('tag model rules: create-or-return, rename refused, colour update, delete', async () => {
    const u = await registerUser(app);
    const c = app.caller(u.session);
    const a = await c.tags.create({ name: 'Model' });
    const b = await c.tags.create({ name: 'MODEL', colorHex: '#000000' });
    expect(b.id).toBe(a.id);
    expect(b.colorHex).toBeNull();
    await expect(c.tags.update({ id: a.id, name: 'x', colorHex: null } as never)).rejects.toThrow();
    expect((await c.tags.update({ id: a.id, colorHex: '#ABCDEF' })).colorHex).toBe('#ABCDEF');
    await c.tags.delete({ id: a.id });
    await expect(c.tags.get({ id: a.id })).rejects.toMatchObject({ problemCode: 'not_found' });
  });

  it('key model rules: list hides secrets, revoke is scoped to the owner', async () => {
    const a = await registerUser(app);
    const b = await registerUser(app);
    const k = await app.caller(a.session).keys.create({ name: 'k', scopes: ['tags:read'], expiresInDays: 30 });
    expect(JSON.stringify(await app.caller(a.session).keys.list({}))).not.toContain(k.token);
    await expect(app.caller(b.session).keys.revoke({ id: k.id })).rejects.toMatchObject({ problemCode: 'not_found' });
    await app.caller(a.session).keys.revoke({ id: k.id });
    await expect(app.caller(k.token).me.get()).rejects.toMatchObject({ problemCode: 'unauthorized' });
  });
});
