// The views (Things' model, spec §4.12): Inbox, Today with This Evening, Upcoming, Anytime,
// Someday, Logbook, Trash, an area, a project with its headings, search results. Every view is
// asked with the browser's local date as `today`. To-do rows are listitems holding a checkbox
// named by the title; a row opens in place as a region named by the title (docs/app.md).
// This file routes and holds the row shortcuts; each view lives in its own file here.
import { useEffect, useRef, useState } from 'react';
import { localToday, type Container, type In } from '../api.js';
import { type Route, isTyping, type Ctx, useActions } from './shared.js';
import { TodayView, UpcomingView, GroupedView, LogbookView, SearchView } from './lists.js';
import { InboxView } from './inbox.js';
import { TrashView } from './trash.js';
import { ProjectView, AreaView } from './project.js';
import { QuickEntry } from './quick-entry.js';
import { walkVirtual } from './virtual.js';
import { NotesView } from './notes.js';
import { FiltersView, FilterView } from './filters.js';

export function Views({ route, title, containers, onError }: { route: Route; title: string; containers: Container[]; onError: (m: string) => void }) {
  const ctx: Ctx = { containers, onError };
  const [selected, setSelected] = useState<string | undefined>();
  const [open, setOpen] = useState<{ id: string; focus?: 'deadline' | 'move' } | undefined>();
  const actions = useActions(onError);
  const quick = useRef<HTMLInputElement>(null);
  const key = route.view + ('id' in route ? route.id : '') + ('q' in route ? route.q : '');
  useEffect(() => {
    setSelected(undefined);
    setOpen(undefined);
  }, [key]);

  // Row shortcuts (docs/app.md "Keyboard"): act on the selected row; never while typing.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (isTyping(e.target as HTMLElement) || e.altKey) return;
      if (document.querySelector('[role=dialog][aria-modal=true]')) return;
      const rows = [...document.querySelectorAll<HTMLElement>('main [data-todo]')];
      const ids = rows.map((r) => r.dataset.todo!);
      const i = selected ? ids.indexOf(selected) : -1;
      const todo = i >= 0 ? (JSON.parse(rows[i]!.dataset.state!) as { status: string; parentId: string | null; headingId: string | null }) : undefined;
      // Ctrl/⌘+↑/↓: move the selected to-do before the previous row (after the next one) of its
      // own list, in its project's (or the standalone) order (spec §4.3 band order).
      if ((e.ctrlKey || e.metaKey) && (e.key === 'ArrowUp' || e.key === 'ArrowDown') && selected && todo) {
        const siblings = [...rows[i]!.parentElement!.children].map((c) => (c as HTMLElement).dataset.todo).filter(Boolean) as string[];
        const at = siblings.indexOf(selected);
        const other = siblings[e.key === 'ArrowUp' ? at - 1 : at + 1];
        if (other) {
          e.preventDefault();
          actions.move.mutate({ id: selected, parentId: todo.parentId, headingId: todo.headingId, ...(e.key === 'ArrowUp' ? { before: other } : { after: other }) });
        }
        return;
      }
      if (e.ctrlKey || e.metaKey) return;
      const pick = (n: number) => {
        const id = ids[Math.max(0, Math.min(ids.length - 1, n))];
        if (!id) return;
        setSelected(id);
        rows[ids.indexOf(id)]?.querySelector<HTMLElement>('input[type=checkbox]')?.focus();
      };
      switch (e.key) {
        case 'n':
          e.preventDefault();
          quick.current?.focus();
          return;
        // A virtual list (Anytime, Someday, Logbook) walks its whole order and scrolls the row in.
        case 'j':
          if (!walkVirtual(selected, 1, setSelected)) pick(i + 1);
          return;
        case 'k':
          if (!walkVirtual(selected, -1, setSelected)) pick(i < 0 ? 0 : i - 1);
          return;
      }
      if (!selected || !todo) return;
      switch (e.key) {
        case 'x':
          if (todo.status === 'open') actions.complete.mutate(selected);
          else actions.reopen.mutate(selected);
          break;
        case 't':
          actions.update.mutate({ id: selected, whenDate: localToday(), evening: false, someday: false });
          break;
        case 'e':
          actions.update.mutate({ id: selected, whenDate: localToday(), evening: true, someday: false });
          break;
        case 's':
          actions.update.mutate({ id: selected, whenDate: null, evening: false, someday: true });
          break;
        case 'd':
          setOpen({ id: selected, focus: 'deadline' });
          break;
        case 'm':
          setOpen({ id: selected, focus: 'move' });
          break;
        case 'Enter':
          setOpen({ id: selected });
          break;
        default:
          return;
      }
      e.preventDefault();
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [selected, actions]);

  const list = { ctx, actions, selected, setSelected, open, setOpen };
  const defaults: Partial<In['todos']['create']> =
    route.view === 'today' ? { whenDate: localToday() } : route.view === 'someday' ? { someday: true } : route.view === 'project' ? { parentId: route.id } : {};
  // The Inbox has its own capture box (spec §4.11): captures are not to-dos until processed.
  const showQuick = ['today', 'upcoming', 'anytime', 'someday', 'project'].includes(route.view);
  return (
    <>
      <h1>{title}</h1>
      {showQuick && <QuickEntry inputRef={quick} defaults={defaults} ctx={ctx} actions={actions} />}
      {route.view === 'today' && <TodayView {...list} />}
      {route.view === 'upcoming' && <UpcomingView {...list} />}
      {(route.view === 'anytime' || route.view === 'someday') && <GroupedView which={route.view} {...list} />}
      {route.view === 'logbook' && <LogbookView {...list} />}
      {route.view === 'inbox' && <InboxView ctx={ctx} />}
      {route.view === 'trash' && <TrashView ctx={ctx} />}
      {route.view === 'project' && <ProjectView id={route.id} {...list} />}
      {route.view === 'area' && <AreaView id={route.id} {...list} />}
      {route.view === 'search' && <SearchView q={route.q} {...list} />}
      {(route.view === 'notes' || route.view === 'folder') && <NotesView folderId={route.view === 'folder' ? route.id : null} ctx={ctx} />}
      {route.view === 'filters' && <FiltersView ctx={ctx} />}
      {route.view === 'filter' && <FilterView id={route.id} {...list} />}
    </>
  );
}
