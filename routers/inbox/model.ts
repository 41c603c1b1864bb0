// Inbox items (spec §2.7, §4.11; DECISIONS §6; docs/api.md "Inbox"). Everything but the owner and
// server times is one sealed blob bound to the row. A url capture's page title is fetched after
// the capture has answered (see `fetchTitleAfterAnswer`).
import { and, asc, eq, sql, type SQL } from 'drizzle-orm';
import { attachments, inboxItems } from '../../db/schema/index.js';
import type { Db, Tx } from '../../db/client.js';
import { afterTuple, tuplePage, updatedSince } from '../../db/tuple-page.js';
import type { Deps } from '../deps.js';
import { assertCredentialLive, type Principal } from '../auth/credentials.js';
import { AppError, invalid, notFound } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { iso } from '../../core/clock.js';
import { openJson, rowAad, sealJson } from '../../core/crypto/seal.js';
import { recordEvent } from '../events.js';
import { assertAccountSize } from '../account-size.js';
import { DecryptBudget } from '../../core/decrypt-budget.js';
import { readLinkTitle } from '../link-title/model.js';
import { afterAnswer, type HttpOut } from '../trpc.js';
import type { InboxItemOut, InboxKind, InboxStatus } from './schema.js';
import { createTodo } from '../todos/model.js';
import type { TodoOut } from '../todos/schema.js';
import { createAttachment, openAttachment, type AttachmentRow } from '../attachments/model.js';
import type { NewParent } from '../attachments/files.js';

export type InboxRow = typeof inboxItems.$inferSelect;
export type InboxSealed = {
  kind: InboxKind;
  text: string | null;
  url: string | null;
  title: string | null;
  whenDate: string | null;
  status: InboxStatus;
  /** File and image captures: the attachment holding the file (re-parented to the to-do on move). */
  attachmentId?: string | null;
};

const aad = (userId: string, id: string) => rowAad(userId, 'inbox_items', id);

export function openInbox(dek: Buffer, row: InboxRow): InboxSealed {
  return openJson<InboxSealed>(dek, aad(row.userId, row.id), row.sealed);
}

export function toInbox(row: InboxRow, s: InboxSealed): InboxItemOut {
  return { id: row.id, kind: s.kind, text: s.text, url: s.url, title: s.title, whenDate: s.whenDate, status: s.status, attachmentId: s.attachmentId ?? null, createdAt: iso(row.createdAt), updatedAt: iso(row.updatedAt) };
}

export function getInboxRow(tx: Tx | Db, userId: string, id: string): InboxRow {
  const row = tx.select().from(inboxItems).where(and(eq(inboxItems.userId, userId), eq(inboxItems.id, id))).get();
  if (!row) throw notFound('Inbox item');
  return row;
}

export type CaptureInbox = { kind: 'text' | 'url'; text?: string | undefined; url?: string | undefined; whenDate?: string | null | undefined; id?: string | undefined };

export function captureInbox(deps: Deps, p: Principal, input: CaptureInbox): InboxItemOut {
  return deps.db.transaction((tx) => {
    if (input.kind === 'text' && input.text === undefined) throw invalid('/text', 'required for a text capture');
    if (input.kind === 'text' && input.url !== undefined) throw invalid('/url', 'only a url capture takes url');
    if (input.kind === 'url' && input.url === undefined) throw invalid('/url', 'required for a url capture');
    if (input.id && tx.select({ id: inboxItems.id }).from(inboxItems).where(eq(inboxItems.id, input.id)).get()) {
      throw new AppError('duplicate_id', 'A resource with this id already exists.', { pointer: '/id' });
    }
    const id = input.id ?? newId();
    const now = deps.clock();
    const s: InboxSealed = { kind: input.kind, text: input.text ?? null, url: input.url ?? null, title: null, whenDate: input.whenDate ?? null, status: 'open' };
    const row: InboxRow = { id, userId: p.userId, sealed: sealJson(p.dek, aad(p.userId, id), s), createdAt: now, updatedAt: now };
    tx.insert(inboxItems).values(row).run();
    recordEvent(deps, { userId: p.userId, type: 'inbox.created', id, at: now });
    return toInbox(row, s);
  });
}

export function getInbox(deps: Deps, p: Principal, id: string): InboxItemOut {
  const row = getInboxRow(deps.db, p.userId, id);
  return toInbox(row, openInbox(p.dek, row));
}

/** Capture order; the cursor carries (created time, id). */
const orderCol = sql`printf('%016d', ${inboxItems.createdAt})`;
const orderKey = (r: InboxRow) => String(r.createdAt).padStart(16, '0');

export type InboxListQuery = { limit?: number | undefined; cursor?: string | undefined; updated_since?: string | undefined; status?: InboxStatus | undefined; kind?: InboxKind | undefined };

export function listInbox(deps: Deps, p: Principal, query: InboxListQuery) {
  // The status and kind are sealed: filtering on them opens every item, so the account size
  // bounds it (spec §7 account_too_large), as the to-do status filter does.
  const filtered = query.status !== undefined || query.kind !== undefined;
  assertAccountSize(deps, p.userId);
  const conds: SQL[] = [eq(inboxItems.userId, p.userId)];
  const since = updatedSince(inboxItems.updatedAt, query);
  if (since) conds.push(since);
  return tuplePage({
    key: deps.keys.cursor,
    scope: `${p.userId}:inbox`,
    query,
    arity: 1,
    ...(filtered ? { budget: new DecryptBudget(Number.POSITIVE_INFINITY) } : {}),
    fetch: (after, n) =>
      deps.db
        .select()
        .from(inboxItems)
        .where(and(...conds, ...(after ? [afterTuple([orderCol], inboxItems.id, after)] : [])))
        .orderBy(orderCol, asc(inboxItems.id))
        .limit(n)
        .all(),
    posOf: (r) => ({ k: [orderKey(r)], i: r.id }),
    map: (r) => {
      const s = openInbox(p.dek, r);
      if (query.status !== undefined && s.status !== query.status) return null;
      if (query.kind !== undefined && s.kind !== query.kind) return null;
      return toInbox(r, s);
    },
  });
}

/** archive → archived, someday → someday. A moved item stays moved (409 conflict). */
export function setInboxStatus(deps: Deps, p: Principal, id: string, status: 'archived' | 'someday'): InboxItemOut {
  return deps.db.transaction((tx) => {
    const row = getInboxRow(tx, p.userId, id);
    const s = openInbox(p.dek, row);
    if (s.status === 'moved') throw new AppError('conflict', 'This inbox item was moved to a to-do; it can no longer change status.');
    if (s.status === status) return toInbox(row, s);
    const next: InboxSealed = { ...s, status };
    const now = deps.clock();
    const sealed = sealJson(p.dek, aad(p.userId, id), next);
    tx.update(inboxItems).set({ sealed, updatedAt: now }).where(and(eq(inboxItems.userId, p.userId), eq(inboxItems.id, id))).run();
    recordEvent(deps, { userId: p.userId, type: 'inbox.updated', id, at: now });
    return toInbox({ ...row, sealed, updatedAt: now }, next);
  });
}

/**
 * A file or image capture (POST /v1/inbox/files, rest/files.ts): the item comes into being in the
 * upload's finish transaction, with the file as its attachment (parentType `inbox`), so neither
 * is visible before the whole body is stored. Records `inbox.created` (and the upload records
 * `attachment.created`).
 */
export function fileCaptureParent(deps: Deps, p: Principal, itemId: string, input: { kind: 'file' | 'image'; title?: string | undefined; whenDate?: string | undefined }): NewParent<InboxItemOut> {
  return {
    create: (tx, now, attachmentId) => {
      const s: InboxSealed = { kind: input.kind, text: null, url: null, title: input.title ?? null, whenDate: input.whenDate ?? null, status: 'open', attachmentId };
      const row: InboxRow = { id: itemId, userId: p.userId, sealed: sealJson(p.dek, aad(p.userId, itemId), s), createdAt: now, updatedAt: now };
      tx.insert(inboxItems).values(row).run();
      recordEvent(deps, { userId: p.userId, type: 'inbox.created', id: itemId, at: now });
      return toInbox(row, s);
    },
  };
}

/** A to-do title is one line: control characters (line breaks of a text capture) become spaces. */
const oneLine = (s: string) => s.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();

/** The new to-do's title: the text, else the fetched (or uploaded) title, else the url, else the kind. */
function todoTitle(s: InboxSealed): string {
  for (const c of [s.text, s.title, s.url]) {
    const t = c === null ? '' : oneLine(c);
    if (t) return t;
  }
  return s.kind === 'image' ? 'Image' : 'File';
}

/**
 * A file or image capture's name is the item's title (POST /v1/inbox/files?title=, rest/files.ts;
 * the attachment is stored untitled). On move the file takes it as its attachment title, so the
 * to-do's file is not nameless; a title the attachment was given meanwhile (PATCH) is kept.
 * Sealed again under the same key and row binding as the attachment's other metadata.
 */
function carriedName(p: Principal, a: AttachmentRow, s: InboxSealed): { sealed?: Buffer } {
  if (s.title === null) return {};
  const meta = openAttachment(p.dek, a);
  if (meta.kind !== 'file' || meta.title !== null) return {};
  return { sealed: sealJson(p.dek, rowAad(p.userId, 'attachments', a.id), { ...meta, title: s.title }) };
}

/**
 * move (spec §4.11): one transaction makes the to-do (in `parentId`, a project or subproject of
 * the caller, or standalone; `whenDate` kept), keeps a url capture's url as a url attachment of
 * the to-do, re-parents the item's own attachments (a file or image capture's file) to the to-do,
 * and sets the item `moved`. Open, archived and someday items move; a moved one is `conflict`.
 */
export function moveInbox(deps: Deps, p: Principal, input: { id: string; parentId?: string | null | undefined }): { item: InboxItemOut; todo: TodoOut } {
  return deps.db.transaction((tx) => {
    const row = getInboxRow(tx, p.userId, input.id);
    const s = openInbox(p.dek, row);
    if (s.status === 'moved') throw new AppError('conflict', 'This inbox item was already moved to a to-do.');
    const todo = createTodo(deps, p, { title: todoTitle(s), whenDate: s.whenDate, parentId: input.parentId ?? null });
    const now = deps.clock();
    if (s.url !== null) createAttachment(deps, p, { parentType: 'todo', parentId: todo.id, kind: 'url', url: s.url, title: s.title });
    const own = tx
      .select()
      .from(attachments)
      .where(and(eq(attachments.userId, p.userId), eq(attachments.parentType, 'inbox'), eq(attachments.parentId, row.id)))
      .all();
    for (const a of own) {
      tx.update(attachments)
        .set({ parentType: 'todo', parentId: todo.id, updatedAt: now, ...carriedName(p, a, s) })
        .where(and(eq(attachments.userId, p.userId), eq(attachments.id, a.id)))
        .run();
      recordEvent(deps, { userId: p.userId, type: 'attachment.updated', id: a.id, at: now });
    }
    const next: InboxSealed = { ...s, status: 'moved' };
    const sealed = sealJson(p.dek, aad(p.userId, row.id), next);
    tx.update(inboxItems).set({ sealed, updatedAt: now }).where(and(eq(inboxItems.userId, p.userId), eq(inboxItems.id, row.id))).run();
    recordEvent(deps, { userId: p.userId, type: 'inbox.updated', id: row.id, at: now });
    return { item: toInbox({ ...row, sealed, updatedAt: now }, next), todo };
  });
}

/** Title tasks armed or running (tests wait on `inboxTitlesSettled`, never on a timer). */
const running = new Set<Promise<void>>();

export async function inboxTitlesSettled(): Promise<void> {
  while (running.size) await Promise.allSettled([...running]);
}

const itemExists = (deps: Deps, userId: string, id: string) =>
  !!deps.db.select({ id: inboxItems.id }).from(inboxItems).where(and(eq(inboxItems.userId, userId), eq(inboxItems.id, id))).get();

/**
 * A url capture's page title (docs/api.md "Inbox", docs/security.md "Inbox titles"). Called from
 * the capture's resolver, it only schedules: `afterAnswer` starts the task once the capture's
 * transaction has committed and its answer has been sent (the response's 'close'), never inside
 * that transaction. The task holds the request's principal (and so its data key) only in this
 * closure. It checks the item exists (a capture that rolled back fetches nothing), fetches through
 * the same function link titles use (readLinkTitle, the outbound door), then writes the title in
 * its own IMMEDIATE transaction that first checks the credential still stands (a rotation, logout
 * or revocation in between means nothing is written) and records `inbox.updated` with it. The
 * title is written only when none is there. When the task ends nothing decrypted and no key is
 * kept: the closure is dropped and the title exists only sealed in the row.
 */
export function fetchTitleAfterAnswer(deps: Deps, p: Principal, ctx: { http: HttpOut }, id: string, url: string): void {
  let start!: () => void;
  const started = new Promise<void>((resolve) => (start = resolve));
  const task = started
    .then(async () => {
      if (!itemExists(deps, p.userId, id)) return;
      const { title, failure } = await readLinkTitle(deps, url);
      if (title === null) {
        // Issue 28 item 14: why, as a class (refused_address, timeout, too_large, not_html,
        // http_4xx, …), at debug level; never the URL, its host or the page.
        deps.log.debug({ failure }, 'inbox title fetch failed; the item keeps title null');
        return;
      }
      deps.db.$client
        .transaction(() => {
          assertCredentialLive(deps, p);
          const row = deps.db.select().from(inboxItems).where(and(eq(inboxItems.userId, p.userId), eq(inboxItems.id, id))).get();
          if (!row) return;
          const s = openInbox(p.dek, row);
          if (s.title !== null) return;
          const now = deps.clock();
          const sealed = sealJson(p.dek, aad(p.userId, id), { ...s, title });
          deps.db.update(inboxItems).set({ sealed, updatedAt: now }).where(and(eq(inboxItems.userId, p.userId), eq(inboxItems.id, id))).run();
          recordEvent(deps, { userId: p.userId, type: 'inbox.updated', id, at: now });
        })
        .immediate();
    })
    .catch((err: unknown) => {
      // No URL and no title in the log: only that the task failed.
      deps.log.warn({ errName: err instanceof Error ? err.name : 'unknown' }, 'inbox title task failed; the item keeps title null');
    })
    .finally(() => running.delete(task));
  // Counted as running from the moment an adapter arms it (before the answer is written), so a
  // test that has the answer can wait for it; a call without HTTP never arms or starts it.
  afterAnswer(ctx, { armed: () => running.add(task), run: start });
}
