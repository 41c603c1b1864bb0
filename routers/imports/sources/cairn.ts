// Cairn's own export (routers/export/stream.ts, docs/export-schema.json) read into an import plan.
// The export's ids are the source ids; relations keep pointing at them. Times, sort keys and
// derived fields are not carried over: items are made in the export's order (each list is in app
// order), so they line up the same way; a note keeps its current text, not its history.
import { AppError } from '../../../core/errors.js';
import { emptyPlan, type ImportPlan, type PlanAttachment } from '../plan.js';

type Rec = Record<string, unknown>;
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const arr = (v: unknown): Rec[] => (Array.isArray(v) ? (v as Rec[]) : []);

export function cairnPlan(text: string): ImportPlan {
  let doc: Rec;
  try {
    doc = JSON.parse(text) as Rec;
  } catch {
    throw new AppError('validation_failed', 'The file is not JSON: a Cairn export is the JSON document GET /v1/export answers.');
  }
  if (doc?.format !== 'cairn-export') throw new AppError('validation_failed', 'The file is not a Cairn export (its "format" is not "cairn-export").');
  if (doc.version !== 1) throw new AppError('validation_failed', `This server reads Cairn export version 1; the file is version ${String(doc.version)}.`);
  const plan = emptyPlan('cairn');
  const settings = doc.settings as Rec | undefined;
  if (settings && typeof settings.weekStart === 'string') plan.settings = { weekStart: settings.weekStart };
  for (const t of arr(doc.tags)) plan.tags.push({ sid: String(t.id), name: String(t.name), colorHex: str(t.colorHex) });
  for (const c of arr(doc.containers)) {
    plan.containers.push({
      sid: String(c.id),
      kind: c.kind as 'area' | 'project' | 'subproject',
      parentSid: str(c.parentId),
      name: String(c.name),
      subtitle: str(c.subtitle),
      notes: str(c.notes),
      symbol: str(c.symbol),
      colorHex: str(c.colorHex),
      deadline: str(c.deadline),
      priority: str(c.priority) as 'low' | 'medium' | 'high' | null,
      archived: c.status === 'archived',
      trashed: c.trashedAt != null,
    });
  }
  for (const h of arr(doc.headings)) plan.headings.push({ sid: String(h.id), projectSid: String(h.projectId), name: String(h.name) });
  for (const t of arr(doc.todos)) {
    plan.todos.push({
      sid: String(t.id),
      parentSid: str(t.parentId),
      headingSid: str(t.headingId),
      title: String(t.title),
      notes: str(t.notes),
      whenDate: str(t.whenDate),
      evening: t.evening === true,
      someday: t.someday === true,
      deadline: str(t.deadline),
      priority: str(t.priority) as 'low' | 'medium' | 'high' | null,
      tags: Array.isArray(t.tags) ? (t.tags as string[]) : [],
      checklist: arr(t.checklist).map((i) => ({ title: String(i.title), done: i.done === true })),
      recurrence: (t.recurrence as { rule: string; basis: 'schedule' | 'completion' } | null) ?? null,
      status: (str(t.status) ?? 'open') as 'open' | 'completed' | 'canceled',
      trashed: t.trashedAt != null,
    });
  }
  for (const f of arr(doc.noteFolders)) plan.noteFolders.push({ sid: String(f.id), parentSid: str(f.parentId), name: String(f.name), colorHex: str(f.colorHex), symbol: str(f.symbol), trashed: f.trashedAt != null });
  for (const n of arr(doc.notes)) {
    plan.notes.push({ sid: String(n.id), parentSid: str(n.parentId), folderSid: str(n.folderId), title: str(n.title), body: String(n.body ?? ''), trashed: n.trashedAt != null });
    const versions = arr(n.versions).length;
    if (versions > 1) plan.unmapped.push(`note ${String(n.id)}: ${versions - 1} earlier version(s) not imported (the note keeps its current text)`);
  }
  for (const f of arr(doc.filters)) plan.filters.push({ sid: String(f.id), name: String(f.name), criteria: String(f.criteria), symbol: str(f.symbol) });
  for (const i of arr(doc.inbox)) {
    if (i.status === 'moved') {
      plan.unmapped.push(`inbox item ${String(i.id)}: moved to a to-do (the to-do is imported; the item is not)`);
      continue;
    }
    plan.inbox.push({ sid: String(i.id), kind: i.kind as 'text', text: str(i.text), url: str(i.url), title: i.kind === 'file' || i.kind === 'image' ? str(i.title) : null, whenDate: str(i.whenDate), status: str(i.status) ?? 'open', fileSid: str(i.attachmentId) });
  }
  for (const a of arr(doc.attachments)) {
    const file = a.file as Rec | undefined;
    const out: PlanAttachment = {
      sid: String(a.id),
      parentType: a.parentType as 'todo',
      parentSid: String(a.parentId),
      kind: a.kind as 'url',
      title: str(a.title),
      url: str(a.url),
      text: str(a.text),
      noteSid: str(a.noteId),
      file: file ? { contentType: String(file.contentType), base64: String(file.base64) } : null,
    };
    plan.attachments.push(out);
  }
  return plan;
}
