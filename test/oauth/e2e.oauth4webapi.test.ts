// Issue 17 "done means": an independently written OAuth client (oauth4webapi, from npm) through
// discovery (RFC 9728 then RFC 8414), registration, PKCE authorization approved by a first-party
// session over /v1, the token exchange, an API call, refresh rotation, the 30 s grace (manual
// clock) and reuse detection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oauth from 'oauth4webapi';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, expectProblem, registerUser } from '../helpers/http.js';
import { REDIRECT, openAuthorize, waitPoll } from './helpers.js';

const insecure = { [oauth.allowInsecureRequests]: true } as const;

describe('OAuth 2.1 end to end with oauth4webapi', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(async () => {
    await app.close();
  });

  it('discovers, registers, authorizes with PKCE, exchanges, calls, rotates, graces and detects reuse', async () => {
    const { session } = await registerUser(app);
    const resource = new URL(app.deps.config.publicUrl);

    // RFC 9728: the resource's own metadata must name the resource exactly (a strict client checks).
    const rs = await oauth.processResourceDiscoveryResponse(resource, await oauth.resourceDiscoveryRequest(resource, insecure));
    expect(rs.authorization_servers).toEqual([app.deps.config.publicUrl]);
    const issuer = new URL(rs.authorization_servers![0]!);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
    expect(as.code_challenge_methods_supported).toEqual(['S256']);
    expect(as.authorization_response_iss_parameter_supported).toBe(true);

    const registered = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(as, { client_name: 'oauth4webapi e2e', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }, insecure),
    );
    const client: oauth.Client = { client_id: registered.client_id };
    const auth = oauth.None();

    const verifier = oauth.generateRandomCodeVerifier();
    const challenge = await oauth.calculatePKCECodeChallenge(verifier);
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    for (const [k, v] of Object.entries({ client_id: client.client_id, redirect_uri: REDIRECT, response_type: 'code', scope: 'todos:read todos:write tags:read', resource: resource.href.replace(/\/$/, ''), code_challenge: challenge, code_challenge_method: 'S256', state })) url.searchParams.set(k, v);
    const page = await openAuthorize(url.href);
    expect(page.status).toBe(200);

    // The trusted device: a first-party session looks the code up and grants a subset.
    const look = await call(app, 'GET', `/v1/approvals/${page.userCode}`, { token: session });
    expect(look.status).toBe(200);
    expect(look.body.redirectUri).toBe(REDIRECT);
    expect(look.body.client).toEqual({ id: client.client_id, name: 'oauth4webapi e2e', verified: false });
    const ok = await call(app, 'POST', `/v1/approvals/${page.userCode}/approve`, { token: session, body: { scopes: ['todos:read', 'todos:write'] } });
    expect(ok.status).toBe(200);

    const w = await waitPoll(app, page.handle!);
    expect(w.status).toBe('done');
    const params = oauth.validateAuthResponse(as, client, new URL(w.redirect!), state);
    const tokenRes = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT, verifier, { additionalParameters: { resource: app.deps.config.publicUrl }, ...insecure }),
    );
    expect(tokenRes.token_type).toBe('bearer');
    expect(tokenRes.scope).toBe('todos:read todos:write');
    expect(tokenRes.expires_in).toBe(3600);

    // An API call with the access token; /v1/me reports the granted list.
    const me = await oauth.protectedResourceRequest(tokenRes.access_token, 'GET', new URL('/v1/me', app.url), undefined, undefined, insecure);
    expect(me.status).toBe(200);
    expect(((await me.json()) as { scopes: string[] }).scopes).toEqual(['todos:read', 'todos:write']);
    const created = await call(app, 'POST', '/v1/todos', { token: tokenRes.access_token, body: { title: 'from a third-party app' } });
    expect(created.status).toBe(201);
    expectProblem(await call(app, 'GET', '/v1/tags', { token: tokenRes.access_token }), 403, 'forbidden_scope');

    // Rotation: a new refresh token each time.
    const r1 = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, auth, tokenRes.refresh_token!, insecure));
    expect(r1.refresh_token).not.toBe(tokenRes.refresh_token);
    expect((await call(app, 'GET', `/v1/todos/${created.body.id}`, { token: r1.access_token })).body.title).toBe('from a third-party app');

    // The immediate predecessor within 30 s: a lost response, answered with a fresh pair.
    app.clock.advance(29_000);
    const again = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, auth, tokenRes.refresh_token!, insecure));
    expect(again.refresh_token).not.toBe(r1.refresh_token);
    // The chain continues from the newest token.
    const r2 = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, auth, again.refresh_token!, insecure));

    // After 30 s the predecessor is reuse: the whole grant is revoked.
    app.clock.advance(31_000);
    await expect(oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, auth, again.refresh_token!, insecure))).rejects.toMatchObject({ error: 'invalid_grant' });
    expectProblem(await call(app, 'GET', '/v1/me', { token: r2.access_token }), 401, 'grant_revoked');
    await expect(oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, auth, r2.refresh_token!, insecure))).rejects.toMatchObject({ error: 'invalid_grant' });
  });
});
