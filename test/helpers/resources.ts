// "One of every resource" for the reliability suite (issue 18): how to create each kind of thing a
// user owns, keyed by the path segment that names its collection in /v1 (the segment right before
// an id parameter in a route such as `/v1/todos/{id}`). Isolation, the fuzzer's id pools and the
// secrets scan all read this table, so a new resource is ONE entry here.
//
// test/reliability/isolation.test.ts fails when /openapi.json has an operation with a path
// parameter whose collection segment is neither here nor in NOT_ID_BEARING: a merged route that
// takes an id must say how to make one.
import { createHash, randomBytes } from 'node:crypto';
import { SCOPES } from '../../core/scopes.js';
import { EVENT_TYPES } from '../../routers/events.js';
import { call, createPat, registerUser, type Res } from './http.js';

type Url = { url: string };
type Ids = Record<string, string>;

export type Owner = {
  session: string;
  pat: string;
  userId: string;
  password: string;
  email: string;
  /** Filled by RESOURCES.webhooks: the subscription's signing secret (shown once) and URL. */
  webhook?: { secret: string; url: string };
  /** Filled by RESOURCES.approvals: every secret of one completed OAuth flow. */
  oauth?: OAuthFlow;
};

export type OAuthFlow = { clientId: string; clientSecret: string; userCode: string; handle: string; code: string; verifier: string; access: string; refresh: string };

/**
 * Where RESOURCES.webhooks points subscriptions: `https://127.0.0.1:<port>` (loopback, so the app
 * must run with CAIRN_UNSAFE_ALLOW_LOOPBACK=1). Port 9 (discard) when no receiver listens: nothing
 * is sent unless a test runs a dispatcher. Tests with a receiver set `base` to its origin.
 */
export const WEBHOOK_TARGET = { base: 'https://127.0.0.1:9' };

/** The URL path RESOURCES.webhooks uses for a marker: a content-like marker in the URL, scanned for. */
export const hookPath = (marker: string) => `/hook-${marker.replace(/[^A-Za-z0-9]/g, '')}`;

export const OAUTH_REDIRECT = 'http://127.0.0.1:9/callback';

/**
 * The whole OAuth 2.1 dance for `owner` without a library (docs/oauth.md): register a confidential
 * client (client_secret_post), open the authorize page, approve its nine-digit code with the
 * owner's first-party session, poll the page's wait endpoint, exchange the code. Works against any
 * running server (in-process or a child process): the resource comes from RFC 9728 metadata.
 */
export async function oauthFlow(app: Url, o: Owner, scopes = ['todos:read', 'todos:write']): Promise<OAuthFlow> {
  const resource = (await ok(call(app, 'GET', '/.well-known/oauth-protected-resource'), 'resource metadata')).body.resource as string;
  const reg = await ok(call(app, 'POST', '/oauth/register', { body: { client_name: 'Reliability App', redirect_uris: [OAUTH_REDIRECT], token_endpoint_auth_method: 'client_secret_post' } }), 'oauth register');
  const clientId = reg.body.client_id as string;
  const clientSecret = reg.body.client_secret as string;
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const q = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: OAUTH_REDIRECT, scope: scopes.join(' '), resource, code_challenge: challenge, code_challenge_method: 'S256', state: 'rel' });
  const page = await fetch(`${app.url}/oauth/authorize?${q}`, { redirect: 'manual' });
  const html = await page.text();
  const digits = /id="user-code">(\d{3})-(\d{3})-(\d{3})</.exec(html);
  const handle = /data-wait="([A-Za-z0-9_-]+)"/.exec(html)?.[1];
  if (page.status !== 200 || !digits || !handle) throw new Error(`authorize page: ${page.status} ${html.slice(0, 300)}`);
  const userCode = digits.slice(1).join('');
  await ok(call(app, 'POST', `/v1/approvals/${userCode}/approve`, { token: o.session, body: { scopes } }), 'approve');
  const wait = await ok(call(app, 'POST', '/oauth/authorize/wait', { rawBody: `handle=${handle}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 'wait');
  const code = new URL(wait.body.redirect).searchParams.get('code');
  if (!code) throw new Error(`wait: ${wait.text}`);
  const form = new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, client_secret: clientSecret, redirect_uri: OAUTH_REDIRECT, resource });
  const t = await ok(call(app, 'POST', '/oauth/token', { rawBody: form.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 'token');
  return { clientId, clientSecret, userCode, handle, code, verifier, access: t.body.access_token, refresh: t.body.refresh_token };
}

/** A user with a session and a personal access token holding every scope there is. */
export async function fullUser(app: Url): Promise<Owner> {
  const u = await registerUser(app);
  const pat = await createPat(app, u.session, [...SCOPES], 30, 'every scope');
  return { session: u.session, pat: pat.token, userId: u.userId, password: u.password, email: u.email };
}

async function ok(res: Promise<Res>, what: string): Promise<Res> {
  const r = await res;
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${r.text}`);
  return r;
}

/**
 * Each entry creates one resource of its kind for `owner`, with `marker` in its content where it
 * has content, and returns its id. `made` holds what earlier entries created (entries run in
 * table order, so a heading finds its project).
 */
export type Creator = (app: Url, owner: Owner, marker: string, made: Ids) => Promise<string>;

export const RESOURCES: Record<string, Creator> = {
  keys: async (app, o, m) => (await ok(call(app, 'POST', '/v1/keys', { token: o.session, body: { name: `key ${m}`, scopes: ['todos:read'], expiresInDays: 30 } }), 'key')).body.id,
  tags: async (app, o, m) => (await ok(call(app, 'POST', '/v1/tags', { token: o.pat, body: { name: `tag ${m}` } }), 'tag')).body.id,
  containers: async (app, o, m) => (await ok(call(app, 'POST', '/v1/containers', { token: o.pat, body: { kind: 'project', name: `project ${m}`, notes: `notes ${m}` } }), 'container')).body.id,
  headings: async (app, o, m, made) =>
    (await ok(call(app, 'POST', '/v1/headings', { token: o.pat, body: { projectId: made.containers, name: `heading ${m}` } }), 'heading')).body.id,
  todos: async (app, o, m, made) =>
    (
      await ok(
        call(app, 'POST', '/v1/todos', {
          token: o.pat,
          body: { title: `todo ${m}`, notes: `notes ${m}`, parentId: made.containers, headingId: made.headings, tags: [`tag ${m}`], whenDate: '2026-11-22', recurrence: { rule: 'FREQ=DAILY', basis: 'schedule' } },
        }),
        'todo',
      )
    ).body.id,
  checklist: async (app, o, m, made) => (await ok(call(app, 'POST', `/v1/todos/${made.todos}/checklist`, { token: o.pat, body: { title: `item ${m}` } }), 'checklist')).body.id,
  'note-folders': async (app, o, m) => (await ok(call(app, 'POST', '/v1/note-folders', { token: o.pat, body: { name: `folder ${m}` } }), 'folder')).body.id,
  notes: async (app, o, m, made) => {
    const id = (await ok(call(app, 'POST', '/v1/notes', { token: o.pat, body: { title: `note ${m}`, body: `body ${m}`, folderId: made['note-folders'] } }), 'note')).body.id;
    // A second body, so the note has a version.
    await ok(call(app, 'PATCH', `/v1/notes/${id}`, { token: o.pat, body: { body: `body ${m} edited` } }), 'note edit');
    return id;
  },
  versions: async (app, o, _m, made) => {
    const list = await ok(call(app, 'GET', `/v1/notes/${made.notes}/versions`, { token: o.pat }), 'versions');
    const first = (list.body.data ?? list.body)[0];
    if (!first?.id) throw new Error(`no note version: ${list.text}`);
    return first.id;
  },
  // GET /v1/note-versions/{id}: the same versions by another path.
  'note-versions': async (_app, _o, _m, made) => made.versions!,
  filters: async (app, o, m) => (await ok(call(app, 'POST', '/v1/filters', { token: o.pat, body: { name: `filter ${m}`, criteria: `#"tag ${m}"` } }), 'filter')).body.id,
  inbox: async (app, o, m) => (await ok(call(app, 'POST', '/v1/inbox', { token: o.pat, body: { kind: 'text', text: `capture ${m}` } }), 'inbox')).body.id,
  attachments: async (app, o, m, made) =>
    (await ok(call(app, 'POST', '/v1/attachments', { token: o.pat, body: { parentType: 'todo', parentId: made.todos, kind: 'text', text: `attachment ${m}` } }), 'attachment')).body.id,
  // File attachments share the `attachments` collection; created too so their bytes are on disk.
  'attachments/files': async (app, o, m, made) =>
    (
      await ok(
        call(app, 'POST', `/v1/attachments/files?parentType=todo&parentId=${made.todos}&title=${encodeURIComponent(`file ${m}`)}`, {
          token: o.pat,
          rawBody: `file bytes ${m}`,
          headers: { 'content-type': 'text/plain' },
        }),
        'file',
      )
    ).body.id,
  // `/v1/imports/{id}` (issue 33): an import job (first-party sessions only), a one-task Todoist CSV.
  imports: async (app, o, m) =>
    (
      await ok(
        call(app, 'POST', `/v1/imports?source=todoist&name=${encodeURIComponent(`import ${m}`)}`, { token: o.session, rawBody: `TYPE,CONTENT,PRIORITY,INDENT\ntask,imported ${m},4,1\n` }),
        'import',
      )
    ).body.id,
  // A subscription to every event type at a loopback URL (WEBHOOK_TARGET) whose path carries the
  // marker; its secret (shown once) is kept on the owner for the secrets scan.
  webhooks: async (app, o, m) => {
    const url = WEBHOOK_TARGET.base + hookPath(m);
    const r = await ok(call(app, 'POST', '/v1/webhooks', { token: o.pat, body: { url, events: [...EVENT_TYPES], description: `hook ${m}` } }), 'webhook');
    o.webhook = { secret: r.body.secret, url };
    return r.body.id;
  },
  // `/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver`: the ping queued by the create.
  deliveries: async (app, o, _m, made) => {
    const r = await ok(call(app, 'GET', `/v1/webhooks/${made.webhooks}/deliveries`, { token: o.pat }), 'deliveries');
    const id = r.body.data?.[0]?.id;
    if (!id) throw new Error(`no delivery: ${r.text}`);
    return id;
  },
  // `/v1/approvals/{code}`: the nine-digit code of an authorization request that `o` APPROVED.
  // Decision (docs/reliability.md "Approvals"): a pending code belongs to nobody — it is a bearer
  // secret shown on the authorize page, and whoever approves it becomes the grant's owner — so
  // the user-owned thing is a decided code. Once decided it is 404 for everyone, B included.
  approvals: async (app, o) => {
    o.oauth = await oauthFlow(app, o);
    return o.oauth.userCode;
  },
  // `/v1/grants/{id}`: the grant that flow made.
  grants: async (app, o) => {
    const r = await ok(call(app, 'GET', '/v1/grants', { token: o.session }), 'grants');
    const g = (r.body.data as { id: string; client: { id: string } }[]).find((x) => x.client.id === o.oauth?.clientId);
    if (!g) throw new Error(`no grant: ${r.text}`);
    return g.id;
  },
};

/**
 * Collection segments before a path parameter that do NOT name a user's resource: the route
 * takes no user-owned id. Everything else must have a RESOURCES entry.
 */
export const NOT_ID_BEARING: Record<string, string> = {
  errors: 'GET /errors/{code}: a public page per error code, no user data',
};

/** Creates one of every resource for `owner`; ids by collection segment. */
export async function createEveryResource(app: Url, owner: Owner, marker: string): Promise<Ids> {
  const made: Ids = {};
  for (const [kind, create] of Object.entries(RESOURCES)) made[kind] = await create(app, owner, marker, made);
  return made;
}

/** The collection segment naming each `{param}` of an OpenAPI path: `/v1/notes/{noteId}/versions/{id}` -> noteId: notes, id: versions. */
export function paramCollections(path: string): Record<string, string> {
  const out: Record<string, string> = {};
  const segs = path.split('/');
  segs.forEach((s, i) => {
    const m = /^\{(.+)\}$/.exec(s);
    if (m) out[m[1]!] = segs[i - 1] ?? '';
  });
  return out;
}
