// Notes and note folders (spec §2.3–2.5, §4.6–4.8; docs/app.md "Notes, filters and files"): the
// sidebar's Notes section, the notes view (#/notes: notes in no folder; #/notes/<id>: a folder's),
// folders created, renamed and trashed, a note opened in place (title, Markdown body rendered
// through Markdown, folder, trash) with its versions (list, show, restore).
import { useEffect, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, message, type Out } from '../api.js';
import { Markdown, type Ctx, type Route, Loading } from './shared.js';

type Note = Out['notes']['get'];
type Folder = Out['noteFolders']['get'];

const foldersQuery = { queryKey: ['note-folders'], queryFn: () => api.noteFolders.list.query({ limit: 200 }) };

/** A note's name: its title, else the first line of its body. */
export function noteName(n: Pick<Note, 'title' | 'body'>): string {
  return n.title?.trim() || n.body.trim().split('\n')[0]!.slice(0, 80) || 'Untitled note';
}

/** The sidebar's Notes section: the notes view and each folder. */
export function NotesNav({ route }: { route: Route }) {
  const folders = useQuery(foldersQuery);
  const link = (href: string, name: string, current: boolean, sub = false) => (
    <li key={href} className={sub ? 'sub' : undefined}>
      <a href={href} aria-current={current ? 'page' : undefined}>
        {name}
      </a>
    </li>
  );
  return (
    <ul aria-label="Notes">
      {link('#/notes', 'Notes', route.view === 'notes')}
      {(folders.data?.data ?? []).map((f) => link(`#/notes/${encodeURIComponent(f.id)}`, f.name, route.view === 'folder' && route.id === f.id, true))}
    </ul>
  );
}

export function NotesView({ folderId, ctx }: { folderId: string | null; ctx: Ctx }) {
  const qc = useQueryClient();
  const folders = useQuery(foldersQuery);
  const notes = useQuery({
    queryKey: ['notes', folderId],
    // Standalone notes (parent null); without a folder id, those in no folder.
    queryFn: async () => (folderId ? (await api.notes.list.query({ folder_id: folderId, limit: 200 })).data : (await api.notes.list.query({ parent_id: 'null', limit: 200 })).data.filter((n) => n.folderId === null)),
  });
  const settle = { onError: (e: unknown) => ctx.onError(message(e)), onSettled: () => qc.invalidateQueries() };
  const [folderName, setFolderName] = useState('');
  const createFolder = useMutation({ mutationFn: (name: string) => api.noteFolders.create.mutate({ name }), ...settle });
  const [open, setOpen] = useState<string | undefined>();
  const [title, setTitle] = useState('');
  const [body, setBody] = useState('');
  const createNote = useMutation({
    mutationFn: (v: { title: string; body: string }) => api.notes.create.mutate({ title: v.title || null, body: v.body, folderId }),
    ...settle,
  });
  useEffect(() => setOpen(undefined), [folderId]);
  const all = folders.data?.data ?? [];
  const folder = folderId ? all.find((f) => f.id === folderId) : undefined;
  return (
    <div className="notes">
      <section aria-labelledby="folders-title">
        <h2 id="folders-title">Folders</h2>
        <ul aria-label="Folders" className="folders">
          <li>
            <a href="#/notes" aria-current={folderId === null ? 'page' : undefined}>
              No folder
            </a>
          </li>
          {all.map((f) => (
            <li key={f.id} className={f.parentId ? 'sub' : undefined}>
              <a href={`#/notes/${encodeURIComponent(f.id)}`} aria-current={f.id === folderId ? 'page' : undefined}>
                {f.name}
              </a>{' '}
              <span className="badge" aria-label={`${f.noteCount} notes`}>
                {f.noteCount}
              </span>
            </li>
          ))}
        </ul>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (folderName.trim()) createFolder.mutate(folderName.trim(), { onSuccess: (f) => ((location.hash = `#/notes/${encodeURIComponent(f.id)}`), setFolderName('')) });
          }}
        >
          <input type="text" aria-label="New folder" placeholder="New folder" maxLength={256} value={folderName} onChange={(e) => setFolderName(e.target.value)} />{' '}
          <button type="submit">Create folder</button>
        </form>
      </section>
      {folderId && (
        <Loading q={folders}>{() => (folder ? <FolderHeader folder={folder} ctx={ctx} /> : <p role="alert">This folder is gone (deleted or in the Trash).</p>)}</Loading>
      )}
      <section aria-labelledby="notes-title">
        <h2 id="notes-title">{folder ? `Notes in ${folder.name}` : 'Notes in no folder'}</h2>
        <Loading q={notes}>
          {() => (
            <ul aria-label={folder ? `Notes in ${folder.name}` : 'Notes in no folder'} className="todos">
              {notes.data!.length === 0 && <li>No notes here yet.</li>}
              {notes.data!.map((n) => (
                <li key={n.id}>
                  <div className="row">
                    <button type="button" className="title" aria-expanded={open === n.id} onClick={() => setOpen(open === n.id ? undefined : n.id)}>
                      {noteName(n)}
                    </button>
                    <span className="badge">{new Date(n.updatedAt).toLocaleDateString()}</span>
                  </div>
                  {open === n.id && <NoteEditor note={n} folders={all} ctx={ctx} onClose={() => setOpen(undefined)} />}
                </li>
              ))}
            </ul>
          )}
        </Loading>
        <form
          className="new-note"
          onSubmit={(e) => {
            e.preventDefault();
            if (!body.trim()) return ctx.onError('A note needs a body.');
            createNote.mutate(
              { title: title.trim(), body },
              {
                onSuccess: (n) => {
                  setTitle('');
                  setBody('');
                  setOpen(n.id);
                },
              },
            );
          }}
        >
          <label>
            New note title <input type="text" value={title} maxLength={512} onChange={(e) => setTitle(e.target.value)} />
          </label>
          <label>
            New note body (Markdown) <textarea value={body} onChange={(e) => setBody(e.target.value)} />
          </label>
          <button type="submit">Create note</button>
        </form>
      </section>
    </div>
  );
}

/** A folder's name (rename) and its trash button. */
function FolderHeader({ folder, ctx }: { folder: Folder; ctx: Ctx }) {
  const qc = useQueryClient();
  const [name, setName] = useState(folder.name);
  useEffect(() => setName(folder.name), [folder.name]);
  const settle = { onError: (e: unknown) => ctx.onError(message(e)), onSettled: () => qc.invalidateQueries() };
  const rename = useMutation({ mutationFn: (n: string) => api.noteFolders.update.mutate({ id: folder.id, name: n }), ...settle });
  const trash = useMutation({ mutationFn: () => api.noteFolders.trash.mutate({ id: folder.id }), ...settle, onSuccess: () => (location.hash = '#/notes') });
  return (
    <section aria-label={`Folder ${folder.name}`} className="folder">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (name.trim() && name.trim() !== folder.name) rename.mutate(name.trim());
        }}
      >
        <label>
          Folder name <input type="text" value={name} maxLength={256} onChange={(e) => setName(e.target.value)} />
        </label>{' '}
        <button type="submit">Rename folder</button>{' '}
        <button type="button" onClick={() => trash.mutate()}>
          Move folder to Trash
        </button>
      </form>
    </section>
  );
}

/** A note opened in place: a region named by the note. Title and body save when they lose focus. */
function NoteEditor({ note, folders, ctx, onClose }: { note: Note; folders: Folder[]; ctx: Ctx; onClose: () => void }) {
  const qc = useQueryClient();
  const [title, setTitle] = useState(note.title ?? '');
  const [body, setBody] = useState(note.body);
  // A restore (or a change made elsewhere) changes what the server holds: show it.
  useEffect(() => {
    setTitle(note.title ?? '');
    setBody(note.body);
  }, [note.title, note.body]);
  const settle = { onError: (e: unknown) => ctx.onError(message(e)), onSettled: () => qc.invalidateQueries() };
  const update = useMutation({ mutationFn: (v: { title?: string | null; body?: string }) => api.notes.update.mutate({ id: note.id, ...v }), ...settle });
  const move = useMutation({ mutationFn: (folderId: string | null) => api.notes.move.mutate({ id: note.id, parentId: null, folderId }), ...settle });
  const trash = useMutation({ mutationFn: () => api.notes.trash.mutate({ id: note.id }), ...settle });
  const [versions, setVersions] = useState(false);
  const name = noteName(note);
  return (
    <section className="editor note-editor" aria-label={name}>
      <label>
        Title
        <input type="text" value={title} maxLength={512} onChange={(e) => setTitle(e.target.value)} onBlur={() => title.trim() !== (note.title ?? '') && update.mutate({ title: title.trim() || null })} />
      </label>
      <label>
        Body (Markdown)
        <textarea
          value={body}
          onChange={(e) => setBody(e.target.value)}
          onBlur={() => {
            if (body === note.body) return;
            if (!body.trim()) {
              ctx.onError('A note needs a body: move it to the Trash instead.');
              setBody(note.body);
              return;
            }
            update.mutate({ body });
          }}
        />
      </label>
      {body.trim() && <Markdown md={body} label="Note preview" />}
      <label>
        Folder
        <select value={note.folderId ?? ''} onChange={(e) => move.mutate(e.target.value || null)}>
          <option value="">No folder</option>
          {folders.map((f) => (
            <option key={f.id} value={f.id}>
              {f.name}
            </option>
          ))}
        </select>
      </label>
      <div className="buttons">
        <button type="button" aria-expanded={versions} onClick={() => setVersions(!versions)}>
          Versions
        </button>
        <button type="button" onClick={onClose}>
          Close
        </button>
        <button type="button" onClick={() => trash.mutate()}>
          Move note to Trash
        </button>
      </div>
      {versions && <Versions note={note} ctx={ctx} />}
    </section>
  );
}

/**
 * A note's versions, newest first (spec §2.5): when and why each was made; show its text; restore
 * it. A note keeps its newest 100 versions (VERSIONS_KEPT), so one page holds them all; they are
 * numbered from the oldest kept.
 */
function Versions({ note, ctx }: { note: Note; ctx: Ctx }) {
  const qc = useQueryClient();
  const q = useQuery({ queryKey: ['note-versions', note.id], queryFn: () => api.noteVersions.list.query({ id: note.id, limit: 100 }) });
  const [shown, setShown] = useState<string | undefined>();
  const text = useQuery({ queryKey: ['note-version', note.id, shown], enabled: !!shown, queryFn: () => api.noteVersions.getText.query({ noteId: note.id, id: shown! }) });
  const restore = useMutation({
    mutationFn: (id: string) => api.noteVersions.restore.mutate({ noteId: note.id, id }),
    onError: (e) => ctx.onError(message(e)),
    onSettled: () => qc.invalidateQueries(),
  });
  return (
    <Loading q={q}>
      {() => (
        <ol aria-label="Versions" className="versions" reversed>
          {q.data!.data.map((v, i) => {
            const n = q.data!.data.length - i;
            return (
              <li key={v.id}>
                <span>
                  Version {n}: {v.source}, {new Date(v.updatedAt).toLocaleString()}
                  {i === 0 ? ' (current)' : ''}
                </span>{' '}
                <button type="button" aria-expanded={shown === v.id} aria-label={`Show version ${n}`} onClick={() => setShown(shown === v.id ? undefined : v.id)}>
                  Show
                </button>{' '}
                {i > 0 && (
                  <button type="button" aria-label={`Restore version ${n}`} onClick={() => restore.mutate(v.id)}>
                    Restore
                  </button>
                )}
                {shown === v.id && text.data && (
                  <div className="version-text" role="region" aria-label={`Version ${n}`}>
                    {text.data.title && <strong>{text.data.title}</strong>}
                    <pre>{text.data.body}</pre>
                  </div>
                )}
              </li>
            );
          })}
        </ol>
      )}
    </Loading>
  );
}
