// Running an import plan (routers/imports/plan.ts; docs/import.md). Every item is created through
// its resource's model, with its input checked by the create route's own zod schema, so it is
// sealed, indexed and evented exactly as a request's would be. Items go in batches of BATCH, each
// batch one transaction of routers/middleware/atomic.ts `runWrite` (never the whole import in
// one): a crash keeps whole batches, and a re-run picks up where it stopped.
//
// Idempotent by source id: each created item records a link, a blind index of (source, kind,
// source id) under the user's data key, that source id sealed, and the new id (db/schema/imports.ts,
// routers/imports/links.ts), in the same transaction as the item. An item whose link exists is not
// created again; its link's target stands in for it as a parent. A key rotation writes every link
// again under the new key, so this holds across rotations. A dry run reads the links and reports,
// writing nothing.
import { and, eq } from 'drizzle-orm';
import type { z } from 'zod';
import type { Deps } from '../deps.js';
import { assertCredentialLive, type Principal } from '../auth/credentials.js';
import { importLinks } from '../../db/schema/imports.js';
import { AppError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { runWrite } from '../middleware/atomic.js';
import { createTag } from '../tags/model.js';
import { CreateTagInput } from '../tags/schema.js';
import { createContainer, setContainerStatus, trashContainer } from '../containers/model.js';
import { CreateContainerInput } from '../containers/schema.js';
import { createHeading } from '../headings/model.js';
import { CreateHeadingInput } from '../headings/schema.js';
import { createTodo, finishTodo, trashTodo, updateTodo } from '../todos/model.js';
import { CreateTodoInput } from '../todos/schema.js';
import { createFolder, trashFolder } from '../note-folders/model.js';
import { CreateNoteFolderInput } from '../note-folders/schema.js';
import { createNote, trashNote } from '../notes/model.js';
import { CreateNoteInput } from '../notes/schema.js';
import { createFilter } from '../filters/model.js';
import { CreateFilterInput } from '../filters/schema.js';
import { captureInbox, fileCaptureParent, setInboxStatus } from '../inbox/model.js';
import { CaptureInboxInput } from '../inbox/schema.js';
import { createAttachment } from '../attachments/model.js';
import { CreateAttachmentInput } from '../attachments/schema.js';
import { startUpload } from '../attachments/files.js';
import { updateSettings, WEEK_DAYS, type WeekStart } from '../settings/model.js';
import { todayOf } from '../todos/rows.js';
import { PLAN_KINDS, type ImportPlan, type ImportSource, type PlanKind } from './plan.js';
import { linkIndex as indexOf, sealLink } from './links.js';

/** Items per transaction: small enough that one batch holds the write lock for milliseconds. */
export const BATCH = 100;

export type ImportReport = {
  source: ImportSource;
  dryRun: boolean;
  /** Created by this run (dry run: would be created). */
  created: Record<PlanKind, number>;
  /** Already imported by an earlier run (found by source id): left alone. */
  existing: Record<PlanKind, number>;
  /** Items refused by Cairn's rules (or whose parent could not be made), with the reason. */
  failed: { kind: PlanKind; sourceId: string; detail: string }[];
  /** What the source holds that Cairn cannot take. */
  unmapped: string[];
};

export type Progress = (done: number, total: number) => void;

const zero = (): Record<PlanKind, number> => Object.fromEntries(PLAN_KINDS.map((k) => [k, 0])) as Record<PlanKind, number>;

function linkIndex(p: Principal, source: string, kind: PlanKind, sid: string): Buffer {
  return indexOf(p.dek, { source, kind, sid });
}

/** A new link's columns: its own id, and the source id sealed under it (routers/imports/links.ts). */
function linkRow(p: Principal, source: string, kind: PlanKind, sid: string) {
  const id = newId();
  return { id, sealed: sealLink(p.dek, p.userId, id, { source, kind, sid }) };
}

function parsed<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const first = r.error.issues[0]!;
  throw new AppError('validation_failed', `${first.path.join('.') || 'item'}: ${first.message}`);
}

function message(e: unknown): string {
  if (e instanceof AppError) return e.message;
  throw e;
}

/** One item: its kind and source id, its parents (kind, source id; checked in a dry run too), how to make it. */
type Step = { kind: PlanKind; sid: string; needs?: [PlanKind, string | null | undefined][]; make: () => string };

/**
 * Creates (or, with `dryRun`, reports) the plan for `p`. `progress` is told after each batch.
 * Asynchronous only between batches, so other requests run between them.
 */
export async function applyPlan(deps: Deps, p: Principal, plan: ImportPlan, opts: { dryRun: boolean; progress?: Progress | undefined }): Promise<ImportReport> {
  const report: ImportReport = { source: plan.source, dryRun: opts.dryRun, created: zero(), existing: zero(), failed: [], unmapped: [...plan.unmapped] };
  const ids = new Map<string, string>(); // `${kind}\0${sid}` → id in this account
  const known = (kind: PlanKind, sid: string | null | undefined) => (sid == null ? null : ids.get(`${kind}\0${sid}`));
  const wanted = (kind: PlanKind, sid: string, what: string): string => {
    const id = known(kind, sid);
    if (id === undefined || id === null) throw new AppError('validation_failed', `its ${what} (${sid}) was not imported`);
    return id;
  };
  const findLink = deps.db.$client.prepare('SELECT target_id AS target, id IS NULL AS legacy, rowid AS r FROM import_links WHERE user_id = ? AND source_index = ?');
  // A link made before migration 0019 has no sealed source id, so a key rotation could not keep
  // it: a real run that finds one gives it its id and sealed source id (in the batch's transaction).
  const upgradeLink = deps.db.$client.prepare('UPDATE import_links SET id = ?, sealed = ? WHERE rowid = ? AND user_id = ? AND id IS NULL');
  const ctx = { deps, principal: p, http: { headers: {} as Record<string, string> } };
  const today = todayOf(deps);
  const after: (() => void)[] = []; // archive and trash once everything inside exists

  const total = PLAN_KINDS.reduce((n, k) => n + plan[k].length, 0);
  let done = 0;

  async function run(steps: Step[]): Promise<void> {
    for (let start = 0; start < steps.length; start += BATCH) {
      const batch = steps.slice(start, start + BATCH);
      const one = (s: Step) => {
        const key = `${s.kind}\0${s.sid}`;
        const index = linkIndex(p, plan.source, s.kind, s.sid);
        const found = findLink.get(p.userId, index) as { target: string; legacy: number; r: number } | undefined;
        if (found !== undefined) {
          if (found.legacy && !opts.dryRun) {
            const row = linkRow(p, plan.source, s.kind, s.sid);
            upgradeLink.run(row.id, row.sealed, found.r, p.userId);
          }
          ids.set(key, found.target);
          report.existing[s.kind]++;
          return;
        }
        if (opts.dryRun) {
          const missing = (s.needs ?? []).find(([k, sid]) => sid != null && !ids.has(`${k}\0${sid}`));
          if (missing) {
            report.failed.push({ kind: s.kind, sourceId: s.sid, detail: `its ${missing[0]} parent (${missing[1]}) would not be imported` });
            return;
          }
          // Nothing is made: a stand-in id lets children count as mappable.
          ids.set(key, `dry-run:${s.sid}`);
          report.created[s.kind]++;
          return;
        }
        try {
          const id = deps.db.transaction((tx) => {
            const made = s.make();
            tx.insert(importLinks).values({ userId: p.userId, sourceIndex: index, targetId: made, createdAt: deps.clock(), ...linkRow(p, plan.source, s.kind, s.sid) }).run();
            return made;
          });
          ids.set(key, id);
          report.created[s.kind]++;
        } catch (e) {
          report.failed.push({ kind: s.kind, sourceId: s.sid, detail: message(e) });
        }
      };
      if (opts.dryRun) {
        // A dry run writes nothing, but its key must still be the account's: after a key rotation
        // every link is under the new key, and this one would find none of them.
        assertCredentialLive(deps, p);
        batch.forEach(one);
      } else runWrite(ctx, () => batch.forEach(one));
      done += batch.length;
      opts.progress?.(done, total);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  // In dry run every step resolves its parents against stand-ins: `make` is never called.
  if (plan.settings && !opts.dryRun) {
    const weekStart = plan.settings.weekStart;
    if ((WEEK_DAYS as readonly string[]).includes(weekStart)) runWrite(ctx, () => updateSettings(deps, p, { weekStart: weekStart as WeekStart }));
  }

  await run(plan.tags.map((t) => ({ kind: 'tags', sid: t.sid, make: () => createTag(deps, p, parsed(CreateTagInput, { name: t.name, ...(t.colorHex ? { colorHex: t.colorHex } : {}) })).tag.id })));

  const rank = { area: 0, project: 1, subproject: 2 } as const;
  const containers = [...plan.containers].sort((a, b) => rank[a.kind] - rank[b.kind]);
  await run(
    containers.map((c) => ({
      kind: 'containers',
      sid: c.sid,
      needs: [['containers', c.parentSid]],
      make: () => {
        const id = createContainer(
          deps,
          p,
          parsed(CreateContainerInput, {
            kind: c.kind,
            name: c.name,
            parentId: c.parentSid === null ? null : wanted('containers', c.parentSid, 'parent'),
            subtitle: c.subtitle ?? null,
            notes: c.notes ?? null,
            symbol: c.symbol ?? null,
            colorHex: c.colorHex ?? null,
            deadline: c.deadline ?? null,
            priority: c.priority ?? null,
          }),
        ).id;
        if (c.archived) after.push(() => setContainerStatus(deps, p, id, 'archived'));
        if (c.trashed) after.push(() => trashContainer(deps, p, id, true));
        return id;
      },
    })),
  );

  await run(plan.headings.map((h) => ({ kind: 'headings', sid: h.sid, needs: [['containers', h.projectSid]], make: () => createHeading(deps, p, parsed(CreateHeadingInput, { projectId: wanted('containers', h.projectSid, 'project'), name: h.name })).id })));

  await run(
    plan.todos.map((t) => ({
      kind: 'todos',
      sid: t.sid,
      needs: [
        ['containers', t.parentSid],
        ['headings', t.headingSid],
      ],
      make: () => {
        const finished = t.status === 'completed' || t.status === 'canceled';
        const input = parsed(CreateTodoInput, {
          title: t.title,
          notes: t.notes ?? null,
          whenDate: t.whenDate ?? null,
          evening: t.evening ?? false,
          someday: t.someday ?? false,
          deadline: t.deadline ?? null,
          priority: t.priority ?? null,
          tags: t.tags ?? [],
          checklist: t.checklist ?? [],
          // A finished recurring to-do is finished first and gets its rule after: finishing one
          // with a rule would log a copy and roll it on (routers/todos/completion.ts).
          recurrence: finished ? null : (t.recurrence ?? null),
          parentId: t.parentSid === null ? null : wanted('containers', t.parentSid, 'project'),
          headingId: t.headingSid === null ? null : wanted('headings', t.headingSid, 'heading'),
        });
        const id = createTodo(deps, p, input).id;
        if (finished) {
          finishTodo(deps, p, id, t.status as 'completed' | 'canceled', today);
          if (t.recurrence) updateTodo(deps, p, { id, recurrence: parsed(CreateTodoInput.shape.recurrence, t.recurrence) });
        }
        if (t.trashed) trashTodo(deps, p, id, true);
        return id;
      },
    })),
  );

  const folders = [...plan.noteFolders].sort((a, b) => Number(a.parentSid !== null) - Number(b.parentSid !== null));
  await run(
    folders.map((f) => ({
      kind: 'noteFolders',
      sid: f.sid,
      needs: [['noteFolders', f.parentSid]],
      make: () => {
        const id = createFolder(
          deps,
          p,
          parsed(CreateNoteFolderInput, { name: f.name, colorHex: f.colorHex ?? null, symbol: f.symbol ?? null, parentId: f.parentSid === null ? null : wanted('noteFolders', f.parentSid, 'parent folder') }),
        ).id;
        if (f.trashed) after.push(() => trashFolder(deps, p, id, true));
        return id;
      },
    })),
  );

  await run(
    plan.notes.map((n) => ({
      kind: 'notes',
      sid: n.sid,
      needs: [
        ['containers', n.parentSid],
        ['noteFolders', n.folderSid],
      ],
      make: () => {
        const id = createNote(
          deps,
          p,
          parsed(CreateNoteInput, {
            title: n.title,
            body: n.body,
            parentId: n.parentSid === null ? null : wanted('containers', n.parentSid, 'project'),
            folderId: n.folderSid === null ? null : wanted('noteFolders', n.folderSid, 'folder'),
          }),
        ).id;
        if (n.trashed) trashNote(deps, p, id, true);
        return id;
      },
    })),
  );

  await run(plan.filters.map((f) => ({ kind: 'filters', sid: f.sid, make: () => createFilter(deps, p, parsed(CreateFilterInput, { name: f.name, criteria: f.criteria, symbol: f.symbol ?? null })).id })));

  // File and image captures come into being with their file (the attachment of `fileSid`).
  const fileOf = new Map(plan.attachments.filter((a) => a.parentType === 'inbox' && a.file).map((a) => [a.parentSid, a]));
  await run(
    plan.inbox.map((item) => ({
      kind: 'inbox',
      sid: item.sid,
      make: () => {
        let id: string;
        if (item.kind === 'file' || item.kind === 'image') {
          const a = fileOf.get(item.sid);
          if (!a?.file) throw new AppError('validation_failed', 'a file capture without its file');
          id = newId();
          const up = startUpload(deps, p, { parentType: 'inbox', parentId: id, title: null }, a.file.contentType, fileCaptureParent(deps, p, id, { kind: item.kind, ...(item.title ? { title: item.title } : {}), ...(item.whenDate ? { whenDate: item.whenDate } : {}) }));
          up.write(Buffer.from(a.file.base64, 'base64'));
          const out = up.finish();
          // The capture's attachment is this attachment: linked so it is not made again below.
          const link = linkRow(p, plan.source, 'attachments', a.sid);
          deps.db.$client
            .prepare('INSERT INTO import_links (user_id, source_index, target_id, created_at, id, sealed) VALUES (?, ?, ?, ?, ?, ?)')
            .run(p.userId, linkIndex(p, plan.source, 'attachments', a.sid), out.id, deps.clock(), link.id, link.sealed);
        } else {
          id = captureInbox(deps, p, parsed(CaptureInboxInput, { kind: item.kind, ...(item.text ? { text: item.text } : {}), ...(item.url ? { url: item.url } : {}), whenDate: item.whenDate ?? null })).id;
        }
        if (item.status === 'archived' || item.status === 'someday') setInboxStatus(deps, p, id, item.status);
        return id;
      },
    })),
  );

  const maxFile = deps.config.maxUploadBytes;
  await run(
    plan.attachments
      .filter((a) => !(a.parentType === 'inbox' && a.file && plan.inbox.some((i) => i.sid === a.parentSid && (i.kind === 'file' || i.kind === 'image'))))
      .map((a) => ({
        kind: 'attachments',
        sid: a.sid,
        needs: [
          [a.parentType === 'todo' ? 'todos' : a.parentType === 'container' ? 'containers' : 'inbox', a.parentSid],
          ['notes', a.kind === 'note' ? a.noteSid : null],
        ],
        make: () => {
          const parentKind: PlanKind = a.parentType === 'todo' ? 'todos' : a.parentType === 'container' ? 'containers' : 'inbox';
          const parentId = wanted(parentKind, a.parentSid, a.parentType);
          if (a.kind === 'file') {
            if (!a.file) throw new AppError('validation_failed', 'a file attachment without its file');
            const bytes = Buffer.from(a.file.base64, 'base64');
            if (bytes.length > maxFile) throw new AppError('validation_failed', `the file is larger than this server's limit of ${maxFile} bytes`);
            const up = startUpload(deps, p, { parentType: a.parentType, parentId, title: a.title ?? null }, a.file.contentType);
            up.write(bytes);
            return up.finish().id;
          }
          return createAttachment(
            deps,
            p,
            parsed(CreateAttachmentInput, {
              parentType: a.parentType,
              parentId,
              kind: a.kind,
              ...(a.url ? { url: a.url } : {}),
              ...(a.text ? { text: a.text } : {}),
              ...(a.kind === 'note' ? { noteId: wanted('notes', a.noteSid ?? '', 'note') } : {}),
              title: a.title ?? null,
            }),
          ).id;
        },
      })),
  );

  // Archive and trash last, so what they hold could be made first; bounded batches too.
  for (let start = 0; start < after.length; start += BATCH) {
    const batch = after.slice(start, start + BATCH);
    runWrite(ctx, () =>
      batch.forEach((f) => {
        try {
          deps.db.transaction(() => f());
        } catch (e) {
          report.failed.push({ kind: 'containers', sourceId: '', detail: `archiving or trashing: ${message(e)}` });
        }
      }),
    );
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return report;
}

/** Whether an earlier import of `source` created `kind` `sid` (tests, status reads). */
export function importedId(deps: Deps, p: Principal, source: string, kind: PlanKind, sid: string): string | undefined {
  return deps.db
    .select({ id: importLinks.targetId })
    .from(importLinks)
    .where(and(eq(importLinks.userId, p.userId), eq(importLinks.sourceIndex, linkIndex(p, source, kind, sid))))
    .get()?.id;
}
