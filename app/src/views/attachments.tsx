// A to-do's attachments in its editor (spec §2.6, §4.9; docs/app.md "Notes, filters and files"):
// each shown as text (a file's name and size, a url as a link, a text as text), a download for a
// file, delete; upload by the file input or by dropping files anywhere on the editor. The bytes
// go through the raw file routes (../upload.tsx), everything else through the typed client.
import { useCallback, useRef, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, message, type Out } from '../api.js';
import { downloadAttachment, FilesInput, useFileDrop, useUploads } from '../upload.js';

type Attachment = Out['attachments']['get'];

export function formatSize(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** A file without a title (uploaded elsewhere without one) is "Unnamed file". */
const nameOf = (a: Attachment) => a.title || (a.kind === 'file' ? 'Unnamed file' : (a.url ?? a.text ?? a.kind));

/** The attachments of a to-do, inside its editor; files dropped anywhere on the editor are uploaded. */
export function Attachments({ todoId, onError }: { todoId: string; onError: (m: string) => void }) {
  const qc = useQueryClient();
  const root = useRef<HTMLFieldSetElement>(null);
  const q = useQuery({ queryKey: ['attachments', todoId], queryFn: () => api.attachments.list.query({ parent_id: todoId, limit: 200 }) });
  const settle = { onError: (e: unknown) => onError(message(e)), onSettled: () => qc.invalidateQueries({ queryKey: ['attachments', todoId] }) };
  const upload = useUploads('/v1/attachments/files', { parentType: 'todo', parentId: todoId }, settle);
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
      <FilesInput label="Attach files" onFiles={(files) => upload.mutate(files)} />
      <p className="hint" role="status">
        {upload.isPending ? 'Uploading…' : over ? 'Drop to attach' : 'Or drop files on this to-do.'}
      </p>
    </fieldset>
  );
}
