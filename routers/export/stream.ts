// The account export (issue 33 item 2; docs/api.md "Export", docs/export-schema.json): every piece
// of the caller's content, opened, as one JSON document `{"format":"cairn-export","version":1,…}`.
// It is produced as a sequence of text pieces, never built whole: each section is read one list
// page at a time through the resource's own list model (the same opening and shapes as the list
// routes, trashed rows included), each page is written and dropped before the next is read, and a
// file attachment's bytes are read one sealed chunk at a time and written as base64. Memory is
// bounded by one page (LIMITS.page.maxLimit rows) and one file chunk, whatever the account's size
// (measured in test/export/export-memory.test.ts).
//
// The pages are read between awaits, so writes may land while an export runs: each section is a
// walk of its list order (a row written behind the walk is missed, one moved ahead may appear
// twice). A client that needs a still picture exports from a backup (docs/operations.md).
import type { Deps } from '../deps.js';
import type { Principal } from '../auth/credentials.js';
import { LIMITS } from '../../core/config.js';
import { listTags } from '../tags/model.js';
import { listContainers } from '../containers/model.js';
import { listHeadings } from '../headings/model.js';
import { listTodos } from '../todos/reads.js';
import { listFolders } from '../note-folders/model.js';
import { listNotes } from '../notes/model.js';
import { getVersionText, listVersions } from '../note-versions/model.js';
import { listFilters } from '../filters/model.js';
import { listInbox } from '../inbox/model.js';
import { listAttachments } from '../attachments/model.js';
import { openFile } from '../attachments/files.js';
import { getSettings } from '../settings/model.js';

export const EXPORT_FORMAT = 'cairn-export';
export const EXPORT_VERSION = 1;

const PAGE = LIMITS.page.maxLimit;

type Page<T> = { data: T[]; next_cursor: string | null };

/** Every row of one list, page after page; `await`s between pages so the answer can drain. */
async function* pages<T>(list: (cursor: string | undefined) => Page<T>): AsyncGenerator<T[]> {
  let cursor: string | undefined;
  for (;;) {
    const page = list(cursor);
    yield page.data;
    if (!page.next_cursor) return;
    cursor = page.next_cursor;
  }
}

/** A JSON array member by member: `"name":[a,b,…]`. */
async function* arraySection<T>(name: string, rows: AsyncIterable<T[]>, present: (row: T) => AsyncIterable<string> | string): AsyncGenerator<string> {
  yield `,${JSON.stringify(name)}:[`;
  let first = true;
  for await (const page of rows) {
    let out = '';
    for (const row of page) {
      const piece = present(row);
      if (typeof piece === 'string') {
        out += (first ? '' : ',') + piece;
        first = false;
        continue;
      }
      // A row with a file: flush what is gathered, then its pieces one at a time.
      if (out) yield out;
      out = '';
      if (!first) yield ',';
      first = false;
      yield* piece;
    }
    if (out) yield out;
  }
  yield ']';
}

/** Drops fields the export leaves out: derived counts, which the importer recomputes. */
function without<T extends object, K extends keyof T>(row: T, ...keys: K[]): Omit<T, K> {
  const out = { ...row };
  for (const k of keys) delete out[k];
  return out;
}

/** A file attachment's record, its bytes as `file.base64` written chunk by chunk (3-byte aligned). */
async function* fileRecord(deps: Deps, p: Principal, row: { id: string } & Record<string, unknown>): AsyncGenerator<string> {
  const file = openFile(deps, p, row.id);
  const head = JSON.stringify(row);
  yield `${head.slice(0, -1)},"file":{"contentType":${JSON.stringify(file.contentType)},"size":${file.size},"base64":"`;
  let carry = Buffer.alloc(0);
  for (const chunk of file.chunks()) {
    const bytes = carry.length ? Buffer.concat([carry, chunk]) : chunk;
    const whole = bytes.length - (bytes.length % 3);
    carry = Buffer.from(bytes.subarray(whole));
    if (whole) yield bytes.subarray(0, whole).toString('base64');
    await Promise.resolve();
  }
  yield `${carry.toString('base64')}"}}`;
}

/**
 * The export as text pieces, in document order. `exportedAt` is the server clock's time. The
 * sections and their record shapes are docs/export-schema.json's; a record is its list route's
 * answer (docs/api.md) without derived counts, plus what that route does not carry (a note's
 * versions with their text, a file attachment's bytes).
 */
export async function* exportPieces(deps: Deps, p: Principal): AsyncGenerator<string> {
  const settings = getSettings(deps, p);
  yield `{"format":${JSON.stringify(EXPORT_FORMAT)},"version":${EXPORT_VERSION},"exportedAt":${JSON.stringify(new Date(deps.clock()).toISOString())}`;
  yield `,"settings":${JSON.stringify({ weekStart: settings.weekStart })}`;
  yield* arraySection('tags', pages((cursor) => listTags(deps, p, { limit: PAGE, cursor })), (r) => JSON.stringify(r));
  yield* arraySection('containers', pages((cursor) => listContainers(deps, p, { limit: PAGE, cursor, include_trashed: true })), (r) => JSON.stringify(r));
  yield* arraySection('headings', pages((cursor) => listHeadings(deps, p, { limit: PAGE, cursor })), (r) => JSON.stringify(without(r, 'openCount')));
  yield* arraySection('todos', pages((cursor) => listTodos(deps, p, { limit: PAGE, cursor, include_trashed: true })), (r) => JSON.stringify(r));
  yield* arraySection('noteFolders', pages((cursor) => listFolders(deps, p, { limit: PAGE, cursor, include_trashed: true })), (r) => JSON.stringify(without(r, 'noteCount')));
  yield* arraySection('notes', pages((cursor) => listNotes(deps, p, { limit: PAGE, cursor, include_trashed: true })), (note) => {
    // Versions oldest first, each with its text (GET /v1/notes/{id}/versions/{versionId}).
    const versions: unknown[] = [];
    for (let cursor: string | undefined, more = true; more; ) {
      const page = listVersions(deps, p, note.id, { limit: PAGE, cursor });
      for (const v of page.data) {
        const text = getVersionText(deps, p, note.id, v.id);
        versions.push({ id: v.id, source: v.source, createdAt: v.createdAt, updatedAt: v.updatedAt, title: text.title, body: text.body });
      }
      more = page.next_cursor !== null;
      cursor = page.next_cursor ?? undefined;
    }
    versions.reverse(); // listed newest first
    return JSON.stringify({ ...note, versions });
  });
  yield* arraySection('filters', pages((cursor) => listFilters(deps, p, { limit: PAGE, cursor })), (r) => JSON.stringify(r));
  yield* arraySection('inbox', pages((cursor) => listInbox(deps, p, { limit: PAGE, cursor })), (r) => JSON.stringify(r));
  yield* arraySection('attachments', pages((cursor) => listAttachments(deps, p, { limit: PAGE, cursor })), (r) =>
    r.kind === 'file' ? fileRecord(deps, p, r as typeof r & Record<string, unknown>) : JSON.stringify(r),
  );
  yield '}\n';
}
