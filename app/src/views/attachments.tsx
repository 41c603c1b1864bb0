// A to-do's attachments in its editor (spec §2.6, §4.9; docs/app.md "Notes, filters and files"):
// each shown as text (a file's name and size, a url as a link, a text as text), a download for a
// file, delete; upload by the file input or by dropping files anywhere on the editor.
//
// File bytes are not JSON, so they are not procedures: the server has plain routes for them only
// (rest/files.ts: POST /v1/attachments/files and POST /v1/inbox/files take the raw body,
// GET /v1/attachments/{id}/file streams it back). These are the app's only requests outside
// /trpc. The token goes in the Authorization header, never in a URL: a download is fetched into a
// Blob and saved through an object URL (a plain link to the route could not carry the header).
import { useCallback, useEffect, useRef, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, getToken, message, type Out } from '../api.js';

type Attachment = Out['attachments']['get'];

/** A problem+json answer's words (RFC 9457 detail, or its field errors). */
async function problemOf(res: Response): Promise<string> {
  try {
    const p = (await res.json()) as { detail?: string; title?: string; errors?: { pointer: string; message: string }[] };
    if (p.errors?.length) return p.errors.map((e) => `${e.pointer}: ${e.message}`).join('; ');
    return p.detail ?? p.title ?? `HTTP ${res.status}`;
  } catch {
    return `HTTP ${res.status}`;
  }
}

function authHeader(): Record<string, string> {
  const t = getToken();
  return t ? { authorization: `Bearer ${t}` } : {};
}

/** Titles are at most 512 characters (LIMITS.attachment.title). */
const titleOf = (f: File) => f.name.slice(0, 512);

/**
 * Uploads one file as the raw body of a file route (`path` is `/v1/attachments/files` or
 * `/v1/inbox/files`); the query carries the parent and the file's name, never the credential.
 */
export async function uploadRaw(path: '/v1/attachments/files' | '/v1/inbox/files', query: Record<string, string>, file: File): Promise<unknown> {
  const res = await fetch(`${path}?${new URLSearchParams(query)}`, {
    method: 'POST',
    headers: { ...authHeader(), 'content-type': file.type || 'application/octet-stream', accept: 'application/json' },
    body: file,
  });
  if (!res.ok) throw new Error(await problemOf(res));
  return res.json();
}

/** Fetches a file attachment with the header, then saves it under `name` through an object URL. */
export async function downloadAttachment(id: string, name: string): Promise<void> {
  const res = await fetch(`/v1/attachments/${encodeURIComponent(id)}/file`, { headers: authHeader() });
  if (!res.ok) throw new Error(await problemOf(res));
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.rel = 'noopener';
  document.body.append(a);
  a.click();
  a.remove();
  // The download has started from the click; the URL is released once it cannot be needed.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

export function formatSize(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** Calls `onFiles` with the files dropped on `el` (only drags that carry files; text drags pass). */
export function useFileDrop(el: () => HTMLElement | null | undefined, onFiles: (files: File[]) => void): boolean {
  const [over, setOver] = useState(false);
  const cb = useRef(onFiles);
  cb.current = onFiles;
  useEffect(() => {
    const target = el();
    if (!target) return;
    const hasFiles = (e: DragEvent) => !!e.dataTransfer && [...e.dataTransfer.types].includes('Files');
    const onOver = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      e.dataTransfer!.dropEffect = 'copy';
      setOver(true);
    };
    const onLeave = (e: DragEvent) => {
      if (!target.contains(e.relatedTarget as Node | null)) setOver(false);
    };
    const onDrop = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      setOver(false);
      const files = [...e.dataTransfer!.files];
      if (files.length) cb.current(files);
    };
    target.addEventListener('dragover', onOver);
    target.addEventListener('dragleave', onLeave);
    target.addEventListener('drop', onDrop);
    return () => {
      target.removeEventListener('dragover', onOver);
      target.removeEventListener('dragleave', onLeave);
      target.removeEventListener('drop', onDrop);
    };
  }, [el]);
  return over;
}

/** A file captured in the Inbox keeps its name on the capture, not on the attachment (title null). */
const nameOf = (a: Attachment) => a.title || (a.kind === 'file' ? 'Unnamed file' : (a.url ?? a.text ?? a.kind));

/** The attachments of a to-do, inside its editor; files dropped anywhere on the editor are uploaded. */
export function Attachments({ todoId, onError }: { todoId: string; onError: (m: string) => void }) {
  const qc = useQueryClient();
  const root = useRef<HTMLFieldSetElement>(null);
  const q = useQuery({ queryKey: ['attachments', todoId], queryFn: () => api.attachments.list.query({ parent_id: todoId, limit: 200 }) });
  const settle = { onError: (e: unknown) => onError(message(e)), onSettled: () => qc.invalidateQueries({ queryKey: ['attachments', todoId] }) };
  const upload = useMutation({
    mutationFn: async (files: File[]) => {
      for (const f of files) await uploadRaw('/v1/attachments/files', { parentType: 'todo', parentId: todoId, title: titleOf(f) }, f);
    },
    ...settle,
  });
  const remove = useMutation({ mutationFn: (id: string) => api.attachments.delete.mutate({ id }), ...settle });
  const [busy, setBusy] = useState<string | undefined>();
  const dropOn = useCallback(() => root.current?.closest<HTMLElement>('section.editor') ?? root.current, []);
  const over = useFileDrop(dropOn, (files) => upload.mutate(files));
  const list = q.data?.data ?? [];
  return (
    <fieldset ref={root} className={`attachments${over ? ' dropping' : ''}`}>
      <legend>Attachments</legend>
      {list.length > 0 && (
        <ul aria-label="Attachments">
          {list.map((a) => (
            <li key={a.id}>
              {a.kind === 'url' && a.url ? (
                <a href={a.url} rel="noopener noreferrer" target="_blank">
                  {a.title || a.url}
                </a>
              ) : (
                <span className="file-name">{nameOf(a)}</span>
              )}
              {a.kind === 'file' && a.size !== null && <span className="badge">{formatSize(a.size)}</span>}
              {a.kind === 'text' && a.title && a.text && <span className="badge">{a.text}</span>}{' '}
              {a.kind === 'file' && (
                <button
                  type="button"
                  aria-label={`Download ${nameOf(a)}`}
                  disabled={busy === a.id}
                  onClick={() => {
                    setBusy(a.id);
                    downloadAttachment(a.id, nameOf(a))
                      .catch((e: unknown) => onError(message(e)))
                      .finally(() => setBusy(undefined));
                  }}
                >
                  Download
                </button>
              )}{' '}
              <button type="button" aria-label={`Delete attachment ${nameOf(a)}`} onClick={() => remove.mutate(a.id)}>
                Delete
              </button>
            </li>
          ))}
        </ul>
      )}
      <label>
        Attach files
        <input
          type="file"
          multiple
          onChange={(e) => {
            const files = [...(e.target.files ?? [])];
            e.target.value = '';
            if (files.length) upload.mutate(files);
          }}
        />
      </label>
      <p className="hint" role="status">
        {upload.isPending ? 'Uploading…' : over ? 'Drop to attach' : 'Or drop files on this to-do.'}
      </p>
    </fieldset>
  );
}
