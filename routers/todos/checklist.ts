// A to-do's checklist (routers/todos/model.ts): items from input, and the item routes' changes
// (add, update, delete, move), each through the same write path as PATCH.
import type { Deps } from '../deps.js';
import type { Principal } from '../auth/credentials.js';
import { AppError, invalid, notFound } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { LIMITS } from '../../core/config.js';
import type { TodoOut } from './schema.js';
import { type ChecklistItem, type TodoSealed, getRow, openTodo, presentTodo, writeTodo } from './rows.js';

export function checklistOf(items: { id?: string | undefined; title: string; done?: boolean | undefined }[]): ChecklistItem[] {
  const seen = new Set<string>();
  return items.map((it, i) => {
    const id = it.id ?? newId();
    if (seen.has(id)) throw invalid(`/checklist/${i}/id`, 'checklist item ids must be unique');
    seen.add(id);
    return { id, title: it.title, done: it.done ?? false };
  });
}

/**
 * One change to a to-do's checklist (the item routes, docs/api.md "Checklist items"): the same
 * write path as PATCH (sealed state, `todo.updated` in the transaction), without resending the
 * list. `change` gets a copy of the items and returns the new list; an unchanged list writes nothing.
 */
function changeChecklist(deps: Deps, p: Principal, id: string, change: (items: ChecklistItem[]) => ChecklistItem[]): TodoOut {
  return deps.db.transaction((tx) => {
    const row = getRow(deps, p.userId, id);
    const s = openTodo(p.dek, row);
    const items = change(s.checklist.map((c) => ({ ...c })));
    if (JSON.stringify(items) === JSON.stringify(s.checklist)) return presentTodo(deps, p, row, s);
    const next: TodoSealed = { ...s, checklist: items };
    return presentTodo(deps, p, writeTodo(deps, tx, p, row, next), next);
  });
}

/** The index of an item, or 404 when the to-do has none with this id. */
function itemIndex(items: ChecklistItem[], itemId: string): number {
  const i = items.findIndex((c) => c.id === itemId);
  if (i < 0) throw notFound('Checklist item');
  return i;
}

type Placement = { after?: string | null | undefined; before?: string | null | undefined };

/** Inserts `item` after/before a sibling (422 at the pointer naming an unknown one), else at the end. */
function place(items: ChecklistItem[], item: ChecklistItem, at: Placement): ChecklistItem[] {
  if (at.after && at.before) throw invalid('/before', 'give after or before, not both');
  const ref = at.after ?? at.before;
  if (!ref) return [...items, item];
  const pointer = at.after ? '/after' : '/before';
  if (ref === item.id) throw invalid(pointer, 'an item cannot be placed next to itself');
  const i = items.findIndex((c) => c.id === ref);
  if (i < 0) throw invalid(pointer, 'no checklist item of this to-do has this id');
  return [...items.slice(0, at.after ? i + 1 : i), item, ...items.slice(at.after ? i + 1 : i)];
}

export function addChecklistItem(deps: Deps, p: Principal, input: { id: string; itemId?: string | undefined; title: string; done?: boolean | undefined } & Placement): TodoOut {
  return changeChecklist(deps, p, input.id, (items) => {
    if (items.length >= LIMITS.todo.checklist) throw new AppError('conflict', `A to-do holds at most ${LIMITS.todo.checklist} checklist items.`);
    const itemId = input.itemId ?? newId();
    if (items.some((c) => c.id === itemId)) throw invalid('/itemId', 'the checklist already has an item with this id');
    return place(items, { id: itemId, title: input.title, done: input.done ?? false }, input);
  });
}

export function updateChecklistItem(deps: Deps, p: Principal, input: { id: string; itemId: string; title?: string | undefined; done?: boolean | undefined }): TodoOut {
  return changeChecklist(deps, p, input.id, (items) => {
    const item = items[itemIndex(items, input.itemId)]!;
    if (input.title !== undefined) item.title = input.title;
    if (input.done !== undefined) item.done = input.done;
    return items;
  });
}

export function deleteChecklistItem(deps: Deps, p: Principal, id: string, itemId: string): TodoOut {
  return changeChecklist(deps, p, id, (items) => {
    const i = itemIndex(items, itemId);
    return [...items.slice(0, i), ...items.slice(i + 1)];
  });
}

export function moveChecklistItem(deps: Deps, p: Principal, input: { id: string; itemId: string } & Placement): TodoOut {
  return changeChecklist(deps, p, input.id, (items) => {
    const i = itemIndex(items, input.itemId);
    return place([...items.slice(0, i), ...items.slice(i + 1)], items[i]!, input);
  });
}
