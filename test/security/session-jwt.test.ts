// routers/auth/session-jwt.ts: the one-HMAC check of this server's session JWTs may only accept
// what jose's jwtVerify accepts (with the same options), and must answer the same payload; for
// everything else it steps aside (undefined) and jose decides. Checked over sessions as the
// server mints them and over expired, tampered, foreign and malformed variants.
import { createHmac } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, registerUser } from '../helpers/http.js';
import { fastSessionPayload, SESSION_HEADER } from '../../routers/auth/session-jwt.js';
import { sessionToken, SESSION_AUDIENCE, sessionIssuer } from '../../routers/auth/credentials.js';
import { openDb, closeDb } from '../../db/client.js';
import type { Deps } from '../../routers/deps.js';

const KEY = Buffer.alloc(32, 7);
const OTHER = Buffer.alloc(32, 8);
const ISS = 'urn:cairn:instance:test';
const NOW = Date.UTC(2026, 10, 23, 3, 0, 0);
const s = (ms: number) => Math.floor(ms / 1000);
const b64u = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v), 'utf8').toString('base64url');

/** A compact JWS signed by hand (any header, any payload text), as a forger holding the key could. */
function handSigned(header: unknown, payload: unknown, key = KEY): string {
  const input = `${typeof header === 'string' ? header : b64u(header)}.${b64u(payload)}`;
  return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`;
}
const claims = (over: Record<string, unknown> = {}) => ({ sid: 'S1', sk: 'A'.repeat(43), sub: 'U1', iss: ISS, aud: SESSION_AUDIENCE, iat: s(NOW) - 60, exp: s(NOW) + 3600, ...over });
const minted = (over: Record<string, unknown> = {}, key = KEY) => {
  const c = claims(over);
  return new SignJWT(c).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(key);
};

async function viaJose(token: string): Promise<Record<string, unknown> | 'refused'> {
  try {
    return (await jwtVerify(token, KEY, { issuer: ISS, audience: SESSION_AUDIENCE, algorithms: ['HS256'], currentDate: new Date(NOW) })).payload as Record<string, unknown>;
  } catch {
    return 'refused';
  }
}

describe('session JWTs: the one-HMAC check agrees with jose', () => {
  it('accepts the sessions the server mints, with jose’s payload', async () => {
    const db = openDb(':memory:');
    try {
      const deps = { db, keys: { jwt: KEY }, clock: () => NOW } as unknown as Deps;
      const { token } = await sessionToken(deps, { id: 'S1', userId: 'U1', secret: Buffer.alloc(32, 1), expiresAt: NOW + 86_400_000 });
      expect(token.startsWith(`${SESSION_HEADER}.`)).toBe(true);
      const issuer = sessionIssuer(deps);
      const fast = fastSessionPayload(token, KEY, issuer, SESSION_AUDIENCE, NOW);
      expect(fast).toBeDefined();
      const jose = (await jwtVerify(token, KEY, { issuer, audience: SESSION_AUDIENCE, algorithms: ['HS256'], currentDate: new Date(NOW) })).payload;
      expect(fast).toEqual(jose);
    } finally {
      closeDb(db);
    }
  });

  it('never accepts what jose refuses, and steps aside for every variant it is not sure of', async () => {
    const good = await minted();
    const [h, p, sig] = good.split('.') as [string, string, string];
    const cases: { name: string; token: string; fast: 'accept' | 'aside' }[] = [
      { name: 'valid', token: good, fast: 'accept' },
      { name: 'expires this second', token: await minted({ exp: s(NOW) }), fast: 'aside' },
      { name: 'expired', token: await minted({ exp: s(NOW) - 1 }), fast: 'aside' },
      { name: 'expires next second', token: await minted({ exp: s(NOW) + 1 }), fast: 'accept' },
      { name: 'no exp', token: await minted({ exp: undefined }), fast: 'aside' },
      { name: 'exp as a string', token: handSigned({ alg: 'HS256', typ: 'JWT' }, claims({ exp: String(s(NOW) + 60) })), fast: 'aside' },
      { name: 'another issuer', token: await minted({ iss: 'urn:cairn:instance:other' }), fast: 'aside' },
      { name: 'another audience', token: await minted({ aud: 'someone-else' }), fast: 'aside' },
      { name: 'audience as an array', token: await minted({ aud: [SESSION_AUDIENCE] }), fast: 'aside' },
      { name: 'nbf in the future', token: await minted({ nbf: s(NOW) + 60 }), fast: 'aside' },
      { name: 'nbf in the past', token: await minted({ nbf: s(NOW) - 60 }), fast: 'aside' },
      { name: 'iat as a string', token: handSigned({ alg: 'HS256', typ: 'JWT' }, claims({ iat: 'yesterday' })), fast: 'aside' },
      { name: 'signed with another key', token: await minted({}, OTHER), fast: 'aside' },
      { name: 'payload changed after signing', token: `${h}.${b64u(claims({ sub: 'U2' }))}.${sig}`, fast: 'aside' },
      { name: 'signature truncated', token: `${h}.${p}.${sig.slice(0, -2)}`, fast: 'aside' },
      { name: 'signature with a character appended', token: `${h}.${p}.${sig}A`, fast: 'aside' },
      { name: 'four parts', token: `${good}.x`, fast: 'aside' },
      { name: 'two parts', token: `${h}.${p}`, fast: 'aside' },
      { name: 'alg none', token: `${b64u({ alg: 'none', typ: 'JWT' })}.${p}.`, fast: 'aside' },
      { name: 'alg HS512 header', token: handSigned({ alg: 'HS512', typ: 'JWT' }, claims()), fast: 'aside' },
      { name: 'header with crit', token: handSigned({ alg: 'HS256', typ: 'JWT', crit: ['exp'] }, claims()), fast: 'aside' },
      { name: 'header without typ', token: handSigned({ alg: 'HS256' }, claims()), fast: 'aside' },
      { name: 'payload an array', token: handSigned({ alg: 'HS256', typ: 'JWT' }, [1, 2]), fast: 'aside' },
      { name: 'payload not JSON', token: handSigned({ alg: 'HS256', typ: 'JWT' }, 'not json'), fast: 'aside' },
      { name: 'payload null', token: handSigned({ alg: 'HS256', typ: 'JWT' }, 'null'), fast: 'aside' },
    ];
    for (const c of cases) {
      const fast = fastSessionPayload(c.token, KEY, ISS, SESSION_AUDIENCE, NOW);
      const jose = await viaJose(c.token);
      expect({ case: c.name, fast: fast === undefined ? 'aside' : 'accept' }).toEqual({ case: c.name, fast: c.fast });
      // Whatever the fast check accepts, jose accepts with the same payload.
      if (fast !== undefined) expect({ case: c.name, payload: fast }).toEqual({ case: c.name, payload: jose });
    }
  });
});

describe('session JWTs over HTTP: only signed, current sessions of this server open an account', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app.close());

  const status = async (token: string) => [(await call(app, 'GET', '/v1/me', { token })).status, (await call(app, 'GET', '/trpc/me.get', { token })).status];
  const payloadOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
  const signed = (claims: Record<string, unknown>, key: Uint8Array) => new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(key);

  it('accepts the session as issued; refuses it altered, signed with another key, expired in the token, or for another issuer or audience', async () => {
    const u = await registerUser(app);
    expect(await status(u.session)).toEqual([200, 200]);
    const claims = payloadOf(u.session);
    const [h, , sig] = u.session.split('.') as [string, string, string];
    const other = await registerUser(app);
    const altered = `${h}.${b64u({ ...claims, sub: other.userId })}.${sig}`;
    expect(await status(altered)).toEqual([401, 401]);
    expect(await status(await signed(claims, OTHER))).toEqual([401, 401]);
    const now = s(app.clock());
    // The credential row is still valid: only the token's own claims refuse these.
    expect(await status(await signed({ ...claims, exp: now }, app.deps.keys.jwt))).toEqual([401, 401]);
    expect(await status(await signed({ ...claims, iss: 'urn:cairn:instance:another' }, app.deps.keys.jwt))).toEqual([401, 401]);
    expect(await status(await signed({ ...claims, aud: 'someone-else' }, app.deps.keys.jwt))).toEqual([401, 401]);
    expect(await status(await signed({ ...claims, nbf: now + 60 }, app.deps.keys.jwt))).toEqual([401, 401]);
    // The same claims, re-signed with the right key and a later exp: still the session.
    expect(await status(await signed({ ...claims, exp: now + 60 }, app.deps.keys.jwt))).toEqual([200, 200]);
    // Past the token's exp (and the session's life), the issued token is refused too.
    app.clock.advance(31 * 86_400_000);
    expect(await status(u.session)).toEqual([401, 401]);
  });
});
