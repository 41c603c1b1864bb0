// The shape the Inbox, the Trash and the saved filters share: a query's items as a `list` of
// rows (`ul.todos`, one `li.row` each, keyed by id), a line saying when there are none, and the
// query's loading and error states (Loading).
import type { ReactNode } from 'react';
import { Loading } from './shared.js';

export function RowList<T extends { id: string }>({ q, label, empty, row }: { q: { isPending: boolean; error: unknown; data?: { data: T[] } | undefined }; label: string; empty: string; row: (item: T) => ReactNode }) {
  return (
    <Loading q={q}>
      {() => (
        <ul aria-label={label} className="todos">
          {q.data!.data.length === 0 && <li>{empty}</li>}
          {q.data!.data.map((i) => (
            <li key={i.id} className="row">
              {row(i)}
            </li>
          ))}
        </ul>
      )}
    </Loading>
  );
}
