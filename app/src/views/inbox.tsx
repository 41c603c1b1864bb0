// The Inbox (spec §4.11): captures, and processing one into a to-do.
import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, message } from '../api.js';
import { type Ctx, Loading } from './shared.js';

export function InboxView({ ctx }: { ctx: Ctx }) {
  const qc = useQueryClient();
  const q = useQuery({ queryKey: ['inbox'], queryFn: () => api.inbox.list.query({ limit: 200, status: 'open' }) });
  const capture = useMutation({
    mutationFn: (text: string) => (/^https?:\/\/\S+$/.test(text) ? api.inbox.create.mutate({ kind: 'url', url: text }) : api.inbox.create.mutate({ kind: 'text', text })),
    onError: (e) => ctx.onError(message(e)),
    onSettled: () => qc.invalidateQueries(),
  });
  // Spec §4.11: the capture becomes a standalone to-do (its url kept as an attachment).
  const toTodo = useMutation({ mutationFn: (id: string) => api.inbox.move.mutate({ id }), onError: (e) => ctx.onError(message(e)), onSettled: () => qc.invalidateQueries() });
  const [text, setText] = useState('');
  return (
    <>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (text.trim()) capture.mutate(text.trim(), { onSuccess: () => setText('') });
        }}
      >
        <label>
          Capture <input type="text" aria-label="New capture" value={text} onChange={(e) => setText(e.target.value)} placeholder="A thought or a link" />
        </label>{' '}
        <button type="submit">Capture</button>
      </form>
      <Loading q={q}>
        {() => (
          <ul aria-label="Captures" className="todos">
            {q.data!.data.length === 0 && <li>The inbox is empty.</li>}
            {q.data!.data.map((i) => (
              <li key={i.id} className="row">
                <span className="title">{i.title ?? i.text ?? i.url ?? i.kind}</span> {i.url && <span className="badge">{i.url}</span>}
                <button type="button" aria-label={`Make a to-do of ${i.title ?? i.text ?? i.url ?? i.kind}`} onClick={() => toTodo.mutate(i.id)}>
                  Make to-do
                </button>
              </li>
            ))}
          </ul>
        )}
      </Loading>
    </>
  );
}
