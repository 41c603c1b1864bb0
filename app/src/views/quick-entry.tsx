// The quick-entry field: what it recognised shown as chips (docs/app.md "Quick entry"); `next
// week` and the weekday order follow the account's week start.
import { useMemo, useState } from 'react';
import { type In } from '../api.js';
import { parseQuick } from '../quick.js';
import { type Ctx, type Actions, useWeekStart } from './shared.js';

export function QuickEntry({ inputRef, defaults, ctx, actions }: { inputRef: React.RefObject<HTMLInputElement | null>; defaults: Partial<In['todos']['create']>; ctx: Ctx; actions: Actions }) {
  const [text, setText] = useState('');
  const projects = ctx.containers.filter((c) => c.kind !== 'area').map((c) => ({ id: c.id, name: c.name }));
  const weekStart = useWeekStart();
  const parsed = useMemo(() => parseQuick(text, new Date(), projects, { weekStart }), [text, projects, weekStart]);
  return (
    <form
      className="quick"
      onSubmit={(e) => {
        e.preventDefault();
        if (!parsed.title) return;
        const input: In['todos']['create'] = { title: parsed.title, ...defaults };
        if (parsed.whenDate !== undefined) {
          input.whenDate = parsed.whenDate;
          input.someday = false;
        }
        if (parsed.evening) input.evening = true;
        if (parsed.someday) {
          input.someday = true;
          input.whenDate = null;
        }
        if (parsed.deadline) input.deadline = parsed.deadline;
        if (parsed.tags.length) input.tags = parsed.tags;
        if (parsed.project) input.parentId = parsed.project.id;
        // todos.create takes the recurrence itself: one request.
        if (parsed.recurrence) input.recurrence = parsed.recurrence;
        actions.create.mutate(input);
        setText('');
      }}
    >
      <input type="text" ref={inputRef} aria-label="New to-do" placeholder="New to-do: “Call the bank tomorrow #Errands” ( n )" value={text} onChange={(e) => setText(e.target.value)} maxLength={2000} />
      {parsed.chips.length > 0 && (
        <ul className="chips" aria-label="Recognised">
          {parsed.chips.map((c) => (
            <li key={c}>{c}</li>
          ))}
        </ul>
      )}
    </form>
  );
}
