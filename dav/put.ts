// PUT of a to-do (RFC 4791 §5.3.2): create or replace, through the same models as the routers, in
// one write (routers/middleware/atomic.ts), so `todo.*` events, the sealed index and idempotency of
// state hold as on /v1. If-None-Match: * and If-Match are checked inside that write (412 on a stale
// ETag), so a replayed PUT with the same precondition cannot complete twice.
//
// Names and UIDs (docs/caldav.md "Names and UIDs"): a client may PUT under any resource name and
// with any UID; both are kept sealed (dav_resources) and the to-do is served there from then on.
// A PUT that changes a resource's UID, or reuses the UID of another resource of the calendar, is
// refused (409 `<C:no-uid-conflict/>`).
//
// Status and recurrence (docs/caldav.md "Completing"): COMPLETED / CANCELLED / NEEDS-ACTION go
// through complete, cancel and reopen (a recurring to-do logs a completed copy and rolls on). A
// recurring to-do is also completed by the two other shapes clients send: a RECURRENCE-ID override
// marked completed (Thunderbird), and the master moved to exactly the next occurrence of its own
// rule (Tasks.org, OpenTasks: DTSTART, or DUE when there is no DTSTART); any other move is a
// reschedule. The answer carries no ETag: the stored form is Cairn's rendering, never byte for
// byte what was sent (RFC 4791 §5.3.4), so the client reads it back.
import type { Deps } from '../routers/deps.js';
import type { Principal } from '../routers/auth/credentials.js';
import { addChecklistItem, createTodo, finishTodo, openTodo, reopenTodo, todayOf, updateChecklistItem, updateTodo } from '../routers/todos/model.js';
import { newId } from '../core/ids.js';
import { getRow } from '../routers/todos/rows.js';
import { nextOccurrence } from '../routers/todos/recurrence.js';
import { CreateTodoInput } from '../routers/todos/schema.js';
import { AppError } from '../core/errors.js';
import { DavError, calPrecondition } from './errors.js';
import { itemHref, parentOf } from './paths.js';
import { findByName, findByUid, findCollection, putDav, resourceById, type DavSealed, type Resource } from './store.js';
import { emptyExtras, parseVtodo, type ParsedTodo } from './vtodo.js';
import { checkPreconditions, ownPath, write, type DavRequest } from './request.js';

type Fields = {
  title: string;
  notes: string | null;
  whenDate: string | null;
  deadline: string | null;
  priority: ParsedTodo['priority'];
  tags: string[];
  recurrence: { rule: string; basis: 'schedule' | 'completion' } | null;
  evening?: boolean | undefined;
  someday?: boolean | undefined;
};

/** The mapped fields, checked by the same zod schema as the API (limits, dates, rule, tag names). */
function fieldsOf(t: ParsedTodo, basis: 'schedule' | 'completion'): Fields {
  const f: Fields = {
    title: t.title,
    notes: t.notes,
    whenDate: t.whenDate,
    deadline: t.deadline,
    priority: t.priority,
    tags: t.tags,
    recurrence: t.rrule ? { rule: t.rrule, basis: t.basis ?? basis } : null,
  };
  if (t.evening !== undefined) f.evening = t.evening;
  if (t.someday !== undefined) f.someday = t.someday;
  const checked = CreateTodoInput.safeParse(f);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    throw calPrecondition(403, 'valid-calendar-data', `The to-do cannot be stored: ${issue.path.join('.') || 'value'}: ${issue.message}.`);
  }
  return f;
}

/** A model refusal of client data (a recurrence rule Cairn does not take…) is the CalDAV precondition. */
function asPrecondition<T>(run: () => T): T {
  try {
    return run();
  } catch (e) {
    if (e instanceof AppError && e.problemCode === 'validation_failed') throw calPrecondition(403, 'valid-calendar-data', e.detail);
    throw e;
  }
}

/** Whether the client moved a recurring master to exactly its next occurrence (a completion). */
function movedToNext(deps: Deps, p: Principal, todoId: string, t: ParsedTodo): boolean {
  const s = openTodo(p.dek, getRow(deps, p.userId, todoId));
  if (!s.recurrence || s.status !== 'open' || t.status !== 'open') return false;
  const moved = t.hasStart ? t.whenDate !== s.whenDate : t.deadline !== s.deadline;
  if (!moved) return false;
  const next = nextOccurrence({
    rule: s.recurrence.rule,
    basis: s.recurrence.basis,
    whenDate: s.whenDate,
    deadline: s.deadline,
    today: todayOf(deps),
    count: s.recurrence.done + 1,
    anchor: s.recurrence.anchor,
  });
  if (!next) return false;
  return t.hasStart ? next.whenDate !== null && t.whenDate === next.whenDate : next.deadline !== null && t.deadline === next.deadline && s.whenDate === null;
}

/** Applies the client's status through complete / cancel / reopen. */
function applyStatus(deps: Deps, p: Principal, id: string, status: ParsedTodo['status'], current: 'open' | 'completed' | 'canceled'): void {
  if (status === current) return;
  if (status === 'open') reopenTodo(deps, p, id);
  else {
    if (current !== 'open') reopenTodo(deps, p, id);
    finishTodo(deps, p, id, status, undefined);
  }
}

function update(deps: Deps, p: Principal, existing: Resource, t: ParsedTodo, name: string): void {
  const row = getRow(deps, p.userId, existing.id);
  const s = openTodo(p.dek, row);
  const uid = existing.dav?.uid ?? existing.id;
  if (t.uid !== uid) throw calPrecondition(409, 'no-uid-conflict', 'A PUT may not change the UID of an existing resource.');
  const f = fieldsOf(t, s.recurrence?.basis ?? 'schedule');
  const completesSeries = movedToNext(deps, p, existing.id, t) || (!!s.recurrence && s.status === 'open' && t.overrideCompleted && t.status === 'open');
  const input: Parameters<typeof updateTodo>[2] = { id: existing.id, title: f.title, notes: f.notes, priority: f.priority, tags: f.tags, recurrence: f.recurrence };
  // Completing a series by moving it: the roll sets the dates, the client's move is not applied.
  if (!completesSeries) {
    input.whenDate = f.whenDate;
    input.deadline = f.deadline;
  }
  if (f.evening !== undefined) input.evening = f.evening;
  if (f.someday !== undefined) input.someday = f.someday;
  asPrecondition(() => updateTodo(deps, p, input));
  if (completesSeries) finishTodo(deps, p, existing.id, 'completed', undefined);
  else applyStatus(deps, p, existing.id, t.status, s.status);
  saveDav(deps, p, existing.id, { name, uid, extras: t.extras, children: existing.dav?.children });
}

/** The dav row after the write, with the completion time the to-do now holds (for COMPLETED). */
function saveDav(deps: Deps, p: Principal, id: string, s: DavSealed): void {
  if (s.extras.completed) {
    const now = openTodo(p.dek, getRow(deps, p.userId, id));
    s.extras.completed = now.status === 'completed' ? { jcal: s.extras.completed.jcal, at: now.completedAt } : undefined;
  }
  putDav(deps, p, id, s);
}

/**
 * Subtasks (docs/caldav.md "Subtasks"): a VTODO with RELATED-TO;RELTYPE=PARENT naming a to-do of
 * the same calendar is a checklist item of it (its title and done state; its own dates, priority,
 * categories and other properties are not kept). Its item id is the client's UID when that fits
 * (at most 64 characters, not taken), and the client's name and UID are kept in the to-do's row.
 */
function createChild(deps: Deps, p: Principal, parent: Resource, t: ParsedTodo, name: string): void {
  const s = openTodo(p.dek, getRow(deps, p.userId, parent.id));
  const itemId = t.uid.length <= 64 && !s.checklist.some((c) => c.id === t.uid) && !t.uid.includes('/') ? t.uid : newId();
  asPrecondition(() => addChecklistItem(deps, p, { id: parent.id, itemId, title: fieldsOf(t, 'schedule').title, done: t.status === 'completed' }));
  const now = resourceById(deps, p, parent.id)!;
  const parentUid = now.dav?.uid ?? now.id;
  const ref = { name: name === `${parent.id}.${itemId}.ics` ? null : name, uid: t.uid === `${parentUid}.${itemId}` ? null : t.uid };
  putDav(deps, p, parent.id, { name: now.dav?.name ?? null, uid: now.dav?.uid ?? null, extras: now.dav?.extras ?? emptyExtras(), children: { ...now.dav?.children, [itemId]: ref } });
}

function updateChild(deps: Deps, p: Principal, existing: Resource, t: ParsedTodo): void {
  const child = existing.child!;
  if (t.uid !== child.uid) throw calPrecondition(409, 'no-uid-conflict', 'A PUT may not change the UID of an existing resource.');
  asPrecondition(() => updateChecklistItem(deps, p, { id: child.todoId, itemId: child.itemId, title: fieldsOf(t, 'schedule').title, done: t.status === 'completed' }));
}

function create(deps: Deps, p: Principal, collection: string, t: ParsedTodo, name: string): string {
  const clash = findByUid(deps, p, collection, t.uid);
  if (clash) throw calPrecondition(409, 'no-uid-conflict', `Another resource of this calendar has this UID (${itemHref(p.userId, collection, clash.name)}).`);
  const parent = t.parentUid ? findByUid(deps, p, collection, t.parentUid) : null;
  if (parent && !parent.child) {
    createChild(deps, p, parent, t, name);
    return parent.id;
  }
  const f = fieldsOf(t, 'schedule');
  const created = asPrecondition(() => createTodo(deps, p, { ...f, parentId: parentOf(collection) }));
  if (t.status !== 'open') finishTodo(deps, p, created.id, t.status, undefined);
  saveDav(deps, p, created.id, { name, uid: t.uid, extras: t.extras });
  return created.id;
}

export async function put(r: DavRequest): Promise<void> {
  ownPath(r);
  const { deps, p, path } = r;
  if (path.kind !== 'item') throw new DavError(405, 'PUT stores a to-do: a .ics resource inside a calendar.');
  const parsed = parseVtodo(r.body);
  let created = false;
  await write(r, () => {
    const c = findCollection(deps, p, path.collection);
    if (!c) throw new DavError(409, 'No calendar has this path: create it first (MKCALENDAR).');
    const existing = findByName(deps, p, c.id, path.name);
    checkPreconditions(r.req, existing ? existing.etag : null);
    if (existing?.child) updateChild(deps, p, existing, parsed);
    else if (existing) update(deps, p, existing, parsed, path.name);
    else {
      create(deps, p, c.id, parsed, path.name);
      created = true;
    }
  });
  r.res.statusCode = created ? 201 : 204;
  r.res.end();
}

