// The quick-entry field: what it recognised shown as chips (docs/app.md "Quick entry"); `next
// week` and the weekday order follow the account's week start. The parser (quick.ts, with
// chrono-node) is a chunk of its own, loaded when the field first gets the focus (docs/app.md
// "Serving"): Today's first view does not wait for it. The new to-do is optimistic
// (useActions' create): its row shows before the server answers.
import { useEffect, useMemo, useState } from 'react';
import type { In } from '../api.js';
import type { Parsed, parseQuick as ParseQuick } from '../quick.js';
import { newTodoId } from '../cache.js';
import { type Ctx, type Actions, useWeekStart } from './shared.js';

type Parse = typeof ParseQuick;
let parser: Parse | undefined;
let loading: Promise<Parse> | undefined;
function loadParser(): Promise<Parse> {
  loading ??= import('../quick.js').then(
    (m) => (parser = m.parseQuick),
    (e: unknown) => {
      // Offline before the chunk was ever fetched, say: the next focus asks again.
      loading = undefined;
      throw e;
    },
  );
  return loading;
}

export function QuickEntry({ inputRef, defaults, ctx, actions }: { inputRef: React.RefObject<HTMLInputElement | null>; defaults: Partial<In['todos']['create']>; ctx: Ctx; actions: Actions }) {
  const [text, setText] = useState('');
  const [parse, setParse] = useState(() => parser);
  const [wanted, setWanted] = useState(false);
  const projects = ctx.containers.filter((c) => c.kind !== 'area').map((c) => ({ id: c.id, name: c.name }));
  const weekStart = useWeekStart();
  useEffect(() => {
    if (!wanted || parse) return;
    let live = true;
    loadParser().then(
      (p) => live && setParse(() => p),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [wanted, parse]);
  // Until the parser has loaded: the text as the title, nothing recognised yet.
  const parsed: Parsed = useMemo(() => (parse ? parse(text, new Date(), projects, { weekStart }) : { title: text.trim(), tags: [], chips: [] }), [parse, text, projects, weekStart]);
  const submit = (p: Parsed) => {
    const input: In['todos']['create'] & { id: string } = { title: p.title, ...defaults, id: newTodoId() };
    if (p.whenDate !== undefined) {
      input.whenDate = p.whenDate;
      input.someday = false;
    }
    if (p.evening) input.evening = true;
    if (p.someday) {
      input.someday = true;
      input.whenDate = null;
    }
    if (p.deadline) input.deadline = p.deadline;
    if (p.tags.length) input.tags = p.tags;
    if (p.project) input.parentId = p.project.id;
    // todos.create takes the recurrence itself: one request.
    if (p.recurrence) input.recurrence = p.recurrence;
    actions.create.mutate(input);
  };
  return (
    <form
      className="quick"
      onSubmit={(e) => {
        e.preventDefault();
        if (!text.trim()) return;
        if (parse) {
          if (!parsed.title) return;
          submit(parsed);
          setText('');
          return;
        }
        // Submitted before the parser arrived (a fast typist on a slow line): wait for it, so
        // `tomorrow` or `#tag` mean what they say; the text stays in the field until then.
        const typed = text;
        loadParser().then(
          (p) => {
            const r = p(typed, new Date(), projects, { weekStart });
            if (!r.title) return;
            submit(r);
            setText((now) => (now === typed ? '' : now));
          },
          (err: unknown) => ctx.onError(`Quick entry could not load its parser: ${err instanceof Error ? err.message : String(err)}. Try again when the server can be reached.`),
        );
      }}
    >
      <input
        type="text"
        ref={inputRef}
        aria-label="New to-do"
        placeholder="New to-do: “Call the bank tomorrow #Errands” ( n )"
        value={text}
        onFocus={() => setWanted(true)}
        onChange={(e) => {
          setWanted(true);
          setText(e.target.value);
        }}
        maxLength={2000}
      />
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
