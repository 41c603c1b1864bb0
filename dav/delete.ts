// DELETE (RFC 4918 §9.6). A to-do goes to the trash (restorable for 30 days like every trashed
// to-do; a sync client never deletes irreversibly), honouring If-Match; a subtask's checklist item
// is removed from its to-do. A calendar's project (or
// subproject) goes to the trash with its contents; the standalone calendar cannot be deleted.
import type { Deps } from '../routers/deps.js';
import type { Principal } from '../routers/auth/credentials.js';
import { deleteChecklistItem, trashTodo } from '../routers/todos/model.js';
import { trashContainer } from '../routers/containers/model.js';
import { DavError } from './errors.js';
import { STANDALONE } from './paths.js';
import { findByName, findCollection, putDav, resourceById } from './store.js';
import { checkPreconditions, ownPath, write, type DavRequest } from './request.js';

/** A subtask is its to-do's checklist item: deleting it removes the item (and its kept name). */
function deleteChild(deps: Deps, p: Principal, todoId: string, itemId: string): void {
  deleteChecklistItem(deps, p, todoId, itemId);
  const now = resourceById(deps, p, todoId);
  if (now?.dav?.children?.[itemId]) {
    const { [itemId]: _gone, ...children } = now.dav.children;
    putDav(deps, p, todoId, { ...now.dav, children });
  }
}

export async function del(r: DavRequest): Promise<void> {
  ownPath(r);
  const { deps, p, path } = r;
  if (path.kind === 'item') {
    await write(r, () => {
      const c = findCollection(deps, p, path.collection);
      const res = c && findByName(deps, p, c.id, path.name);
      checkPreconditions(r.req, res ? res.etag : null);
      if (!res) throw new DavError(404, 'No to-do has this path.');
      if (res.child) return deleteChild(deps, p, res.child.todoId, res.child.itemId);
      trashTodo(deps, p, res.id, true);
    });
  } else if (path.kind === 'collection') {
    if (path.collection === STANDALONE) throw new DavError(403, 'The calendar of standalone to-dos cannot be deleted.');
    await write(r, () => {
      const c = findCollection(deps, p, path.collection);
      if (!c) throw new DavError(404, 'No calendar has this path.');
      trashContainer(deps, p, c.id, true);
    });
  } else throw new DavError(403, 'Only a to-do or a calendar can be deleted.');
  r.res.statusCode = 204;
  r.res.end();
}
