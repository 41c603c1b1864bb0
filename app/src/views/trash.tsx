// The Trash: restore one item (a to-do, a project or area, a note, a note folder with its
// subfolders and notes), or empty it.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, message } from '../api.js';
import { type Ctx } from './shared.js';
import { RowList } from './row-list.js';

export function TrashView({ ctx }: { ctx: Ctx }) {
  const qc = useQueryClient();
  const q = useQuery({ queryKey: ['trash'], queryFn: () => api.trash.list.query({ limit: 200 }) });
  const settle = { onError: (e: unknown) => ctx.onError(message(e)), onSettled: () => qc.invalidateQueries() };
  const restore = useMutation({
    mutationFn: async (i: { type: string; id: string }): Promise<void> => {
      if (i.type === 'todo') await api.todos.restore.mutate({ id: i.id });
      else if (i.type === 'container') await api.containers.restore.mutate({ id: i.id });
      else if (i.type === 'note_folder') await api.noteFolders.restore.mutate({ id: i.id });
      else await api.notes.restore.mutate({ id: i.id });
    },
    ...settle,
  });
  const empty = useMutation({ mutationFn: () => api.trash.empty.mutate({}), ...settle });
  return (
    <>
      <RowList
        q={q}
        label="Trash"
        empty="The trash is empty."
        row={(i) => (
          <>
            <span className="title">{i.title}</span> <span className="badge">{i.type.replace('_', ' ')}</span>
            <button type="button" onClick={() => restore.mutate(i)} aria-label={`Restore ${i.title}`}>Restore</button>
          </>
        )}
      />
      {!!q.data?.data.length && (
        <p>
          <button type="button" onClick={() => confirm('Delete everything in the trash for good?') && empty.mutate()}>Empty Trash</button>
        </p>
      )}
    </>
  );
}
