// A to-do opened in place (a region named by its title; docs/app.md "The editor"): its fields,
// its recurrence in words with a picker and a raw RRULE, its checklist (add, check, rename,
// delete, reorder by buttons or Alt+↑/↓). Every write goes through useActions (optimistic).
import { useEffect, useId, useLayoutEffect, useRef, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { api, localToday, type In, type Todo } from '../api.js';
import { Markdown, type ListProps, type Actions, Loading, useWeekStart } from './shared.js';
import { DAY_NAMES, describeRecurrence, pickOf, ruleOf, weekOrder, type Basis, type DayCode, type Pick, type WeekStart } from '../recurrence.js';
import { Attachments } from './attachments.js';

export function EditorById({ id, ...p }: ListProps & { id: string }) {
  const q = useQuery({ queryKey: ['todo', id], queryFn: () => api.todos.get.query({ id }) });
  return <Loading q={q}>{() => <Editor todo={q.data!} {...p} />}</Loading>;
}

/** A to-do opened in place: a region named by its title. Each field saves when it changes. */
export function Editor({ todo, ...p }: ListProps & { todo: Todo }) {
  const { update, move, trash } = p.actions;
  const [title, setTitle] = useState(todo.title);
  const [notes, setNotes] = useState(todo.notes ?? '');
  const [tags, setTags] = useState(todo.tags.join(', '));
  // An optimistic change and its rollback (useActions) show in the fields too.
  useEffect(() => setTitle(todo.title), [todo.title]);
  const weekStart = useWeekStart();
  const deadline = useRef<HTMLInputElement>(null);
  const moveTo = useRef<HTMLSelectElement>(null);
  useEffect(() => {
    if (p.open?.focus === 'deadline') deadline.current?.focus();
    else if (p.open?.focus === 'move') moveTo.current?.focus();
  }, [p.open?.focus]);
  const save = (patch: Omit<In['todos']['update'], 'id'>) => update.mutate({ id: todo.id, ...patch });
  // A completed (archived) project is not a place to move to; the to-do's own stays listed, so
  // the select shows where it is.
  const projects = p.ctx.containers.filter((c) => c.kind !== 'area' && (c.status !== 'archived' || c.id === todo.parentId));
  return (
    <section className="editor" aria-label={todo.title}>
      <label>
        Title
        <input type="text" value={title} onChange={(e) => setTitle(e.target.value)} onBlur={() => title.trim() && title !== todo.title && save({ title: title.trim() })} />
      </label>
      <label>
        Notes
        <textarea value={notes} onChange={(e) => setNotes(e.target.value)} onBlur={() => notes !== (todo.notes ?? '') && save({ notes: notes || null })} />
      </label>
      {notes && <Markdown md={notes} label="Notes preview" />}
      <div className="buttons" role="group" aria-label="When">
        <button type="button" aria-pressed={todo.whenDate === localToday() && !todo.evening} onClick={() => save({ whenDate: localToday(), evening: false, someday: false })}>Today</button>
        <button type="button" aria-pressed={todo.evening} onClick={() => save({ whenDate: localToday(), evening: true, someday: false })}>This Evening</button>
        <button type="button" aria-pressed={todo.someday} onClick={() => save({ whenDate: null, evening: false, someday: true })}>Someday</button>
        <label>
          When date <input type="date" value={todo.whenDate ?? ''} onChange={(e) => save({ whenDate: e.target.value || null, evening: false, someday: false })} />
        </label>
        <button type="button" onClick={() => save({ whenDate: null, evening: false, someday: false })}>Clear when</button>
      </div>
      <label>
        Deadline <input type="date" ref={deadline} value={todo.deadline ?? ''} onChange={(e) => save({ deadline: e.target.value || null })} />
      </label>
      <label>
        Tags (comma-separated)
        <input type="text" value={tags} onChange={(e) => setTags(e.target.value)} onBlur={() => save({ tags: tags.split(',').map((t) => t.trim()).filter(Boolean) })} />
      </label>
      <Repeat key={todo.id} todo={todo} weekStart={weekStart} save={save} />
      <Checklist todo={todo} actions={p.actions} />
      <label>
        Project
        <select ref={moveTo} value={todo.parentId ?? ''} onChange={(e) => move.mutate({ id: todo.id, parentId: e.target.value || null })}>
          <option value="">No project</option>
          {projects.map((c) => (
            <option key={c.id} value={c.id}>
              {c.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Priority
        <select value={todo.priority ?? ''} onChange={(e) => save({ priority: (e.target.value || null) as Todo['priority'] })}>
          <option value="">None</option>
          <option value="low">Low</option>
          <option value="medium">Medium</option>
          <option value="high">High</option>
        </select>
      </label>
      {todo.parentId && <HeadingPicker todo={todo} onMove={(headingId) => move.mutate({ id: todo.id, parentId: todo.parentId, headingId })} />}
      <Attachments todoId={todo.id} onError={p.ctx.onError} />
      <div className="buttons">
        <button type="button" onClick={() => p.setOpen(undefined)}>Close</button>
        {todo.status === 'open' && <button type="button" onClick={() => p.actions.cancel.mutate(todo.id)}>Cancel to-do</button>}
        <button type="button" onClick={() => trash.mutate(todo.id)}>Move to Trash</button>
      </div>
    </section>
  );
}

export function HeadingPicker({ todo, onMove }: { todo: Todo; onMove: (headingId: string | null) => void }) {
  const q = useQuery({ queryKey: ['headings', todo.parentId], queryFn: () => api.headings.list.query({ project_id: todo.parentId!, limit: 200 }) });
  if (!q.data?.data.length) return null;
  return (
    <label>
      Heading
      <select value={todo.headingId ?? ''} onChange={(e) => onMove(e.target.value || null)}>
        <option value="">No heading</option>
        {q.data.data.map((h) => (
          <option key={h.id} value={h.id}>
            {h.name}
          </option>
        ))}
      </select>
    </label>
  );
}

const UNITS: Record<'daily' | 'weekly' | 'monthly' | 'yearly', [string, string]> = { daily: ['day', 'days'], weekly: ['week', 'weeks'], monthly: ['month', 'months'], yearly: ['year', 'years'] };

/**
 * The to-do's recurrence in words, a picker for the common rules (daily, every weekday, weekly
 * on chosen days or every N weeks, monthly on a day, yearly), a raw RRULE for anything else, and
 * the basis (fixed schedule or after completion). The server judges the rule: a refusal comes
 * back as an alert with its message and the words roll back.
 */
function Repeat({ todo, weekStart, save }: { todo: Todo; weekStart: WeekStart; save: (patch: Omit<In['todos']['update'], 'id'>) => void }) {
  const initial = pickOf(todo.recurrence?.rule);
  const fallbackDay = Number((todo.whenDate ?? todo.deadline ?? localToday()).slice(8, 10));
  const [kind, setKind] = useState<Pick['kind']>(todo.recurrence ? initial.kind : 'weekly');
  const [interval, setEvery] = useState('interval' in initial ? String(initial.interval) : '1');
  const [days, setDays] = useState<DayCode[]>(initial.kind === 'weekly' ? initial.days : []);
  const [monthDay, setMonthDay] = useState(String(initial.kind === 'monthly' ? initial.day : fallbackDay));
  const [raw, setRaw] = useState(todo.recurrence?.rule ?? '');
  const [basis, setBasis] = useState<Basis>(todo.recurrence?.basis ?? 'schedule');
  const uid = useId();
  const n = Math.max(1, Math.floor(Number(interval)) || 1);
  const pick = (): Pick => {
    switch (kind) {
      case 'daily':
      case 'yearly':
        return { kind, interval: n };
      case 'weekdays':
        return { kind };
      case 'weekly':
        return { kind, interval: n, days };
      case 'monthly':
        return { kind, interval: n, day: Math.floor(Number(monthDay)) || 1 };
      case 'custom':
        return { kind, rule: raw };
    }
  };
  return (
    <fieldset className="repeat">
      <legend>Repeat</legend>
      <p>
        <span className="visually-hidden">Repeats: </span>
        <strong>{describeRecurrence(todo.recurrence, weekStart)}</strong>
      </p>
      <div className="buttons">
        <label>
          Repeat rule
          <select value={kind} onChange={(e) => setKind(e.target.value as Pick['kind'])}>
            <option value="daily">Daily</option>
            <option value="weekdays">Every weekday</option>
            <option value="weekly">Weekly</option>
            <option value="monthly">Monthly on a day</option>
            <option value="yearly">Yearly</option>
            <option value="custom">Custom (RRULE)</option>
          </select>
        </label>
        {(kind === 'daily' || kind === 'weekly' || kind === 'monthly' || kind === 'yearly') && (
          <span>
            Every <input type="number" aria-label="Interval" min={1} max={1000} value={interval} onChange={(e) => setEvery(e.target.value)} /> {UNITS[kind][n === 1 ? 0 : 1]}
          </span>
        )}
        {kind === 'monthly' && (
          <label>
            On day <input type="number" min={1} max={31} value={monthDay} onChange={(e) => setMonthDay(e.target.value)} />
          </label>
        )}
        {kind === 'custom' && (
          <label>
            RRULE <input type="text" placeholder="FREQ=MONTHLY;BYDAY=-1FR" value={raw} onChange={(e) => setRaw(e.target.value)} spellCheck={false} />
          </label>
        )}
      </div>
      {kind === 'weekly' && (
        <div className="buttons" role="group" aria-label="On days">
          {weekOrder(weekStart).map((d) => (
            <span key={d}>
              <input type="checkbox" id={`${uid}-${d}`} aria-label={DAY_NAMES[d]} checked={days.includes(d)} onChange={(e) => setDays((ds) => (e.target.checked ? [...ds, d] : ds.filter((x) => x !== d)))} />{' '}
              <label htmlFor={`${uid}-${d}`}>{DAY_NAMES[d].slice(0, 3)}</label>
            </span>
          ))}
        </div>
      )}
      <div className="buttons" role="radiogroup" aria-label="Next date">
        <span>
          <input type="radio" id={`${uid}-schedule`} name={`${uid}-basis`} checked={basis === 'schedule'} onChange={() => setBasis('schedule')} /> <label htmlFor={`${uid}-schedule`}>On a fixed schedule</label>
        </span>
        <span>
          <input type="radio" id={`${uid}-completion`} name={`${uid}-basis`} checked={basis === 'completion'} onChange={() => setBasis('completion')} /> <label htmlFor={`${uid}-completion`}>After completion</label>
        </span>
      </div>
      <div className="buttons">
        <button type="button" onClick={() => save({ recurrence: { rule: ruleOf(pick()), basis } })}>Set repeat</button>
        {todo.recurrence && <button type="button" onClick={() => save({ recurrence: null })}>Remove repeat</button>}
      </div>
    </fieldset>
  );
}

/**
 * The checklist, one item at a time (`todos.checklist.*`): check, rename (Enter or leaving the
 * field), delete, and reorder with the ↑/↓ buttons or Alt+↑/↓ on a focused item; focus stays
 * on the item it moved.
 */
function Checklist({ todo, actions }: { todo: Todo; actions: Actions }) {
  const [item, setItem] = useState('');
  const list = useRef<HTMLUListElement>(null);
  const refocus = useRef<{ itemId: string; part: string } | undefined>(undefined);
  const order = todo.checklist.map((c) => c.id).join('\n');
  useLayoutEffect(() => {
    const r = refocus.current;
    if (!r || !list.current) return;
    refocus.current = undefined;
    const li = [...list.current.children].find((el) => (el as HTMLElement).dataset.item === r.itemId);
    (li?.querySelector<HTMLElement>(`[data-part="${r.part}"]:not(:disabled)`) ?? li?.querySelector<HTMLElement>('[data-part="done"]'))?.focus();
  }, [order]);
  const moveBy = (i: number, dir: -1 | 1, part: string) => {
    const c = todo.checklist[i];
    const other = todo.checklist[i + dir];
    if (!c || !other) return;
    refocus.current = { itemId: c.id, part };
    actions.checklist.mutate({ op: 'move', id: todo.id, itemId: c.id, ...(dir < 0 ? { before: other.id } : { after: other.id }) });
  };
  return (
    <fieldset>
      <legend>Checklist</legend>
      <ul aria-label="Checklist" className="checklist" ref={list}>
        {todo.checklist.map((c, i) => (
          <li
            key={c.id}
            data-item={c.id}
            className="buttons"
            onKeyDown={(e) => {
              if (!e.altKey || (e.key !== 'ArrowUp' && e.key !== 'ArrowDown')) return;
              e.preventDefault();
              moveBy(i, e.key === 'ArrowUp' ? -1 : 1, (e.target as HTMLElement).dataset.part ?? 'done');
            }}
          >
            <ItemDone todo={todo} item={c} actions={actions} />
            <ItemTitle title={c.title} onRename={(title) => actions.checklist.mutate({ op: 'update', id: todo.id, itemId: c.id, title })} />
            <button type="button" data-part="up" aria-label={`Move ${c.title} up`} disabled={i === 0} onClick={() => moveBy(i, -1, 'up')}>↑</button>
            <button type="button" data-part="down" aria-label={`Move ${c.title} down`} disabled={i === todo.checklist.length - 1} onClick={() => moveBy(i, 1, 'down')}>↓</button>
            <button type="button" data-part="delete" aria-label={`Delete ${c.title}`} onClick={() => actions.checklist.mutate({ op: 'delete', id: todo.id, itemId: c.id })}>Delete</button>
          </li>
        ))}
      </ul>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          // The item's id is chosen here, so the optimistic item is the one the server keeps.
          if (item.trim()) actions.checklist.mutate({ op: 'add', id: todo.id, itemId: newItemId(), title: item.trim() });
          setItem('');
        }}
      >
        <input type="text" aria-label="New checklist item" value={item} onChange={(e) => setItem(e.target.value)} /> <button type="submit">Add item</button>
      </form>
    </fieldset>
  );
}

/**
 * An item's box: like a row's, it holds its new state from the click on (the cache's change
 * reaches React a task later) and until the write settles.
 */
function ItemDone({ todo, item, actions }: { todo: Todo; item: Todo['checklist'][number]; actions: Actions }) {
  const [pending, setPending] = useState<boolean | undefined>();
  return (
    <input
      type="checkbox"
      data-part="done"
      aria-label={item.title}
      checked={pending ?? item.done}
      onChange={(e) => {
        const done = e.target.checked;
        setPending(done);
        actions.checklist.mutate({ op: 'update', id: todo.id, itemId: item.id, done }, { onSettled: () => setPending(undefined) });
      }}
    />
  );
}

/** A new item's id (≤ 64 characters): random hex, as crypto.randomUUID needs a secure context. */
function newItemId(): string {
  return [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('').toUpperCase();
}

function ItemTitle({ title, onRename }: { title: string; onRename: (t: string) => void }) {
  const [text, setText] = useState(title);
  useEffect(() => setText(title), [title]);
  const commit = () => {
    const t = text.trim();
    if (t && t !== title) onRename(t);
    else setText(title);
  };
  return (
    <input
      type="text"
      data-part="title"
      aria-label={`Rename ${title}`}
      value={text}
      onChange={(e) => setText(e.target.value)}
      onBlur={commit}
      onKeyDown={(e) => {
        if (e.key === 'Enter') {
          e.preventDefault();
          commit();
        } else if (e.key === 'Escape') setText(title);
      }}
    />
  );
}
