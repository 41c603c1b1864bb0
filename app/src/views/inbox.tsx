// The Inbox (spec §4.11): captures (a text, a url, a file), and processing one into a to-do.
// Text and url captures go through `inbox.create`; a file or image capture has no procedure (its
// body is the file's bytes), only the raw route POST /v1/inbox/files (rest/files.ts), which the
// app calls with fetch and the Authorization header (../upload.tsx `uploadRaw`; docs/app.md
// "Notes, filters and files"). A url capture shows the page title the server fetched for it once
// it is there (the live poll refetches; the Inbox also refetches while a title is pending).
import { useCallback, useRef, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, message, type Out } from '../api.js';
import { type Ctx } from './shared.js';
import { RowList } from './row-list.js';
import { downloadAttachment, FilesInput, useFileDrop, useUploads } from '../upload.js';

type Item = Out['inbox']['get'];

const TITLE_TRIES = 15;

/** How a capture is named: its text, else the fetched (or uploaded) title, else its url, else its kind. */
const nameOf = (i: Item) => i.text ?? i.title ?? i.url ?? (i.kind === 'image' ? 'Image' : 'File');

export function InboxView({ ctx }: { ctx: Ctx }) {
  const qc = useQueryClient();
  const titleTries = useRef(0);
  const q = useQuery({
    queryKey: ['inbox'],
    queryFn: () => api.inbox.list.query({ limit: 200, status: 'open' }),
    // A url capture's title is fetched after the capture answered: look again every second
    // until it is in, for at most TITLE_TRIES seconds after a url capture made here (a page that
    // gave no title keeps its url as its name).
    refetchInterval: (query) => (titleTries.current > 0 && query.state.data?.data.some((i) => i.kind === 'url' && i.title === null) ? (titleTries.current--, 1_000) : false),
  });
  const settle = { onError: (e: unknown) => ctx.onError(message(e)), onSettled: () => qc.invalidateQueries() };
  const capture = useMutation({
    mutationFn: (text: string) => (/^https?:\/\/\S+$/.test(text) ? api.inbox.create.mutate({ kind: 'url', url: text }) : api.inbox.create.mutate({ kind: 'text', text })),
    onSuccess: (item) => {
      if (item.kind === 'url') titleTries.current = TITLE_TRIES;
    },
    ...settle,
  });
  const captureFiles = useUploads('/v1/inbox/files', {}, settle);
  // Spec §4.11: the capture becomes a standalone to-do (its url kept as an attachment, its file moved to it).
  const toTodo = useMutation({ mutationFn: (id: string) => api.inbox.move.mutate({ id }), ...settle });
  const [text, setText] = useState('');
  const root = useRef<HTMLDivElement>(null);
  const dropOn = useCallback(() => root.current, []);
  const over = useFileDrop(dropOn, (files) => captureFiles.mutate(files));
  return (
    <div ref={root} className={`inbox${over ? ' dropping' : ''}`}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (text.trim()) capture.mutate(text.trim(), { onSuccess: () => setText('') });
        }}
      >
        <label>
          Capture <input type="text" aria-label="New capture" value={text} onChange={(e) => setText(e.target.value)} placeholder="A thought or a link" />
        </label>{' '}
        <button type="submit">Capture</button>{' '}
        <FilesInput label="Capture files" onFiles={(files) => captureFiles.mutate(files)} />
      </form>
      <p className="hint" role="status">
        {captureFiles.isPending ? 'Uploading…' : over ? 'Drop to capture' : 'Or drop files here.'}
      </p>
      <RowList
        q={q}
        label="Captures"
        empty="The inbox is empty."
        row={(i) => (
          <>
            <span className="title">{nameOf(i)}</span>
            {i.kind === 'url' && i.url && (
              <a className="badge" href={i.url} rel="noopener noreferrer" target="_blank">
                {i.title === null ? `${i.url} (title not fetched yet)` : i.url}
              </a>
            )}
            {(i.kind === 'file' || i.kind === 'image') && <span className="badge">{i.kind}</span>}
            {i.attachmentId && (
              <button type="button" aria-label={`Download ${nameOf(i)}`} onClick={() => downloadAttachment(i.attachmentId!, i.title ?? nameOf(i)).catch((e: unknown) => ctx.onError(message(e)))}>
                Download
              </button>
            )}
            <button type="button" aria-label={`Make a to-do of ${nameOf(i)}`} onClick={() => toTodo.mutate(i.id)}>
              Make to-do
            </button>
          </>
        )}
      />
    </div>
  );
}
