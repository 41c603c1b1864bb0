// "One of every resource" for the reliability suite (issue 18): how to create each kind of thing a
// user owns, keyed by the path segment that names its collection in /v1 (the segment right before
// an id parameter in a route such as `/v1/todos/{id}`). Isolation, the fuzzer's id pools and the
// secrets scan all read this table, so a new resource is ONE entry here.
//
// test/reliability/isolation.test.ts fails when /openapi.json has an operation with a path
// parameter whose collection segment is neither here nor in NOT_ID_BEARING: a merged route that
// takes an id must say how to make one.
import { SCOPES } from '../../server/scopes.js';
import { call, createPat, registerUser, type Res } from './http.js';

type Url = { url: string };
type Ids = Record<string, string>;

export type Owner = { session: string; pat: string; userId: string; password: string; email: string };

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
  // MERGE SLOT (webhooks): `webhooks: async (app, o, m) => ...POST /v1/webhooks... .body.id,` and,
  // if deliveries have their own id route, `deliveries: ...` (made.webhooks is the subscription).
  // MERGE SLOT (OAuth): `approvals`, `grants`: created through the OAuth flow for `o`.
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
