// Files in and out of the app: the three raw file routes and the upload controls that the to-do
// editor's attachments (views/attachments.tsx) and the Inbox (views/inbox.tsx) share.
//
// File bytes are not JSON, so they are not procedures: the server has plain routes for them only
// (rest/files.ts: POST /v1/attachments/files and POST /v1/inbox/files take the raw body,
// GET /v1/attachments/{id}/file streams it back). These are the app's only requests outside
// /trpc (docs/app.md "Notes, filters and files"). The token goes in the Authorization header,
// never in a URL: a download is fetched into a Blob and saved through an object URL (a plain link
// to the route could not carry the header).
import { useEffect, useRef, useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { getToken } from './api.js';

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

/**
 * Uploads one file as the raw body of a file route; the query carries the parent (if any) and the
 * file's name as `title` (at most 512 characters: LIMITS.attachment.title), never the credential.
 */
export async function uploadRaw(path: '/v1/attachments/files' | '/v1/inbox/files', query: Record<string, string>, file: File): Promise<unknown> {
  const res = await fetch(`${path}?${new URLSearchParams({ ...query, title: file.name.slice(0, 512) })}`, {
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

/**
 * Uploads files to one route, one after another: the file input and a drop both call `mutate`
 * with the files; `settle` shows a refusal and refetches.
 */
export function useUploads(path: '/v1/attachments/files' | '/v1/inbox/files', query: Record<string, string>, settle: { onError: (e: unknown) => void; onSettled: () => unknown }) {
  return useMutation({
    mutationFn: async (files: File[]) => {
      for (const f of files) await uploadRaw(path, query, f);
    },
    ...settle,
  });
}

/** A labelled file input taking several files; it is emptied after each pick, so the same file can be picked again. */
export function FilesInput({ label, onFiles }: { label: string; onFiles: (files: File[]) => void }) {
  return (
    <label>
      {label}
      <input
        type="file"
        multiple
        onChange={(e) => {
          const files = [...(e.target.files ?? [])];
          e.target.value = '';
          if (files.length) onFiles(files);
        }}
      />
    </label>
  );
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
