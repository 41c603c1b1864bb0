// Attachments (spec §2.6, §4.9; DECISIONS §3, §6). The parent relation and a note attachment's
// note are plaintext (relations); kind, title, url and text are one sealed blob bound to the row.
import { and, asc, eq, sql, type SQL } from 'drizzle-orm';
import { attachments, containers, inboxItems, notes, todos } from '../../db/schema/index.js';
import type { AttachmentParent } from '../../db/schema/index.js';
import type { Db, Tx } from '../../db/client.js';
import { afterTuple, tuplePage, updatedSince } from '../../db/tuple-page.js';
import type { ListQuery } from '../../db/paging.js';
import type { Deps } from '../deps.js';
import type { Principal } from '../auth/credentials.js';
import { AppError, invalid, notFound } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { iso } from '../../core/clock.js';
import { openJson, rowAad, sealJson } from '../../core/crypto/seal.js';
import { recordEvent } from '../events.js';
import { removeAttachments } from './remove.js';
import type { AttachmentKind, AttachmentOut } from './schema.js';

export type AttachmentRow = typeof attachments.$inferSelect;
export type AttachmentSealed = {
  kind: AttachmentKind | 'file';
  title: string | null;
  url: string | null;
  text: string | null;
  /** File attachments: the upload's Content-Type and byte size (routers/attachments/files.ts). */
  contentType?: string;
  size?: number;
};

const aad = (userId: string, id: string) => rowAad(userId, 'attachments', id);

export function openAttachment(dek: Buffer, row: AttachmentRow): AttachmentSealed {
  return openJson<AttachmentSealed>(dek, aad(row.userId, row.id), row.sealed);
}

export function toAttachment(row: AttachmentRow, s: AttachmentSealed): AttachmentOut {
  return {
    id: row.id,
    parentType: row.parentType,
    parentId: row.parentId,
    kind: s.kind,
    title: s.title,
    url: s.url,
    text: s.text,
    noteId: row.noteId,
    contentType: s.contentType ?? null,
    size: s.size ?? null,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

export function getAttachmentRow(tx: Tx | Db, userId: string, id: string): AttachmentRow {
  const row = tx.select().from(attachments).where(and(eq(attachments.userId, userId), eq(attachments.id, id))).get();
  if (!row) throw notFound('Attachment');
  return row;
}

/** The parent exists and is the caller's (any state: a trashed to-do still holds its attachments). */
export function checkParent(tx: Tx, userId: string, parentType: AttachmentParent, parentId: string): void {
  const table = parentType === 'todo' ? todos : parentType === 'inbox' ? inboxItems : containers;
  const found = tx.select({ id: table.id }).from(table).where(and(eq(table.userId, userId), eq(table.id, parentId))).get();
  if (!found) throw invalid('/parentId', `no ${parentType === 'todo' ? 'to-do' : parentType === 'inbox' ? 'inbox item' : 'container'} with this id`);
}

export type CreateAttachment = {
  parentType: AttachmentParent;
  parentId: string;
  kind: AttachmentKind;
  url?: string | undefined;
  text?: string | undefined;
  noteId?: string | undefined;
  title?: string | null | undefined;
  id?: string | undefined;
};

/** Each kind takes its own field and refuses the others' (pointer at the field). */
function checkKindFields(input: CreateAttachment): void {
  const own = { url: 'url', text: 'text', note: 'noteId' } as const;
  for (const [kind, field] of Object.entries(own) as [AttachmentKind, 'url' | 'text' | 'noteId'][]) {
    if (kind === input.kind && input[field] === undefined) throw invalid(`/${field}`, `required for a ${kind} attachment`);
    if (kind !== input.kind && input[field] !== undefined) throw invalid(`/${field}`, `only a ${kind} attachment takes ${field}`);
  }
}

export function createAttachment(deps: Deps, p: Principal, input: CreateAttachment): AttachmentOut {
  return deps.db.transaction((tx) => {
    checkKindFields(input);
    checkParent(tx, p.userId, input.parentType, input.parentId);
    if (input.noteId !== undefined && !tx.select({ id: notes.id }).from(notes).where(and(eq(notes.userId, p.userId), eq(notes.id, input.noteId))).get()) {
      throw invalid('/noteId', 'no note with this id');
    }
    if (input.id && tx.select({ id: attachments.id }).from(attachments).where(eq(attachments.id, input.id)).get()) {
      throw new AppError('duplicate_id', 'A resource with this id already exists.', { pointer: '/id' });
    }
    const id = input.id ?? newId();
    const now = deps.clock();
    const s: AttachmentSealed = { kind: input.kind, title: input.title ?? null, url: input.url ?? null, text: input.text ?? null };
    const row: AttachmentRow = {
      id,
      userId: p.userId,
      parentType: input.parentType,
      parentId: input.parentId,
      noteId: input.noteId ?? null,
      sealed: sealJson(p.dek, aad(p.userId, id), s),
      createdAt: now,
      updatedAt: now,
    };
    tx.insert(attachments).values(row).run();
    recordEvent(deps, { userId: p.userId, type: 'attachment.created', id, at: now });
    return toAttachment(row, s);
  });
}

export function getAttachment(deps: Deps, p: Principal, id: string): AttachmentOut {
  const row = getAttachmentRow(deps.db, p.userId, id);
  return toAttachment(row, openAttachment(p.dek, row));
}

/** Creation order; the cursor carries (created time, id). */
const orderCol = sql`printf('%016d', ${attachments.createdAt})`;
const orderKey = (r: AttachmentRow) => String(r.createdAt).padStart(16, '0');

export function listAttachments(deps: Deps, p: Principal, query: ListQuery & { parent_id?: string | undefined }) {
  const conds: SQL[] = [eq(attachments.userId, p.userId)];
  if (query.parent_id !== undefined) conds.push(eq(attachments.parentId, query.parent_id));
  const since = updatedSince(attachments.updatedAt, query);
  if (since) conds.push(since);
  return tuplePage({
    key: deps.keys.cursor,
    scope: `${p.userId}:attachments`,
    query,
    arity: 1,
    fetch: (after, n) =>
      deps.db
        .select()
        .from(attachments)
        .where(and(...conds, ...(after ? [afterTuple([orderCol], attachments.id, after)] : [])))
        .orderBy(orderCol, asc(attachments.id))
        .limit(n)
        .all(),
    posOf: (r) => ({ k: [orderKey(r)], i: r.id }),
    map: (r) => toAttachment(r, openAttachment(p.dek, r)),
  });
}

export function updateAttachment(deps: Deps, p: Principal, input: { id: string; title?: string | null | undefined; url?: string | undefined; text?: string | undefined }): AttachmentOut {
  return deps.db.transaction((tx) => {
    const row = getAttachmentRow(tx, p.userId, input.id);
    const s = openAttachment(p.dek, row);
    if (input.url !== undefined && s.kind !== 'url') throw invalid('/url', `a ${s.kind} attachment has no url`);
    if (input.text !== undefined && s.kind !== 'text') throw invalid('/text', `a ${s.kind} attachment has no text`);
    const next: AttachmentSealed = {
      ...s,
      title: input.title !== undefined ? input.title : s.title,
      url: input.url ?? s.url,
      text: input.text ?? s.text,
    };
    if (next.title === s.title && next.url === s.url && next.text === s.text) return toAttachment(row, s);
    const now = deps.clock();
    const sealed = sealJson(p.dek, aad(p.userId, row.id), next);
    tx.update(attachments).set({ sealed, updatedAt: now }).where(and(eq(attachments.userId, p.userId), eq(attachments.id, row.id))).run();
    recordEvent(deps, { userId: p.userId, type: 'attachment.updated', id: row.id, at: now });
    return toAttachment({ ...row, sealed, updatedAt: now }, next);
  });
}

export function deleteAttachment(deps: Deps, p: Principal, id: string): void {
  deps.db.transaction((tx) => {
    getAttachmentRow(tx, p.userId, id);
    removeAttachments(deps, tx, p.userId, [id], deps.clock());
  });
}
