// MOVE of a to-do (RFC 4918 §9.9) to another calendar of the same account: the to-do moves to that
// project (the same model as POST /v1/todos/{id}/move), keeping its id, UID and content; a new
// resource name is kept like a PUT's. An existing destination is trashed first (Overwrite: T, the
// default) or refused with 412 (Overwrite: F). If-Match is honoured on the source.
import { moveTodo, trashTodo } from '../routers/todos/model.js';
import { DavError } from './errors.js';
import { destinationPath, parentOf } from './paths.js';
import { findByName, findCollection, putDav } from './store.js';
import { emptyExtras } from './vtodo.js';
import { checkPreconditions, ownPath, write, type DavRequest } from './request.js';

export async function move(r: DavRequest): Promise<void> {
  ownPath(r);
  const { deps, p, path } = r;
  if (path.kind !== 'item') throw new DavError(403, 'Only a to-do can be moved; calendars keep their place.');
  const dest = destinationPath(r.req.headers.destination as string | undefined);
  if (dest.kind !== 'item' || dest.userId !== p.userId) throw new DavError(403, 'A to-do moves into another calendar of the same account.');
  const overwrite = String(r.req.headers.overwrite ?? 'T').trim().toUpperCase() !== 'F';
  let created = true;
  await write(r, () => {
    const from = findCollection(deps, p, path.collection);
    const res = from && findByName(deps, p, from.id, path.name);
    checkPreconditions(r.req, res ? res.etag : null);
    if (!from || !res) throw new DavError(404, 'No to-do has this path.');
    if (res.child) throw new DavError(403, 'A subtask moves with its to-do.');
    const to = findCollection(deps, p, dest.collection);
    if (!to) throw new DavError(409, 'No calendar has the destination path.');
    const there = findByName(deps, p, to.id, dest.name);
    if (there && there.id === res.id) return;
    if (there) {
      if (!overwrite) throw new DavError(412, 'The destination exists (Overwrite: F).');
      trashTodo(deps, p, there.id, true);
      created = false;
    }
    if (to.id !== from.id) moveTodo(deps, p, { id: res.id, parentId: parentOf(to.id) });
    putDav(deps, p, res.id, { name: dest.name, uid: res.dav?.uid ?? res.id, extras: res.dav?.extras ?? emptyExtras(), children: res.dav?.children });
  });
  r.res.statusCode = created ? 201 : 204;
  r.res.end();
}
