// Long lists, virtualised (docs/app.md "Long lists"; issue 32 "Performance": 2,000+ to-dos at
// 60 fps). Anytime, Someday and the Logbook are groups (a project, a day) of rows; only the rows
// near the window's scroll position are in the DOM, between two spacers that stand for the rest.
// @tanstack/react-virtual measures every row it renders (an opened row grows) and the page keeps
// its normal flow: each group is still a `section` with its `h2` and a `list` of TodoRow
// `listitem`s, and each row says where it stands in its group (aria-posinset / aria-setsize, -1
// while more pages may still add to the group). j/k walk the whole loaded order, not only the
// rows in the DOM (walkVirtual, called by index.tsx). Spacer heights are set through the CSSOM
// (React's `style` prop), which the CSP's style-src does not govern; no style attribute is parsed.
import { memo, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { useWindowVirtualizer, type Virtualizer, type VirtualItem } from '@tanstack/react-virtual';
import { type Todo } from '../api.js';
import { type ListProps } from './shared.js';
import { TodoRow } from './rows.js';

export type VirtualGroup = { key: string; title: string; todos: Todo[] };

type Item = { kind: 'head'; g: number; key: string } | { kind: 'row'; g: number; i: number; key: string };

/**
 * Estimates before a row or heading is measured: style.css's row (6 px padding twice, a 1 px
 * border, a 15 px × 1.45 line in a button with 2 px padding) and h2 (1.1 rem × 1.45, 18 + 6 px
 * margins). Close estimates keep rows from shifting when they are first measured.
 */
const ROW_PX = 38.75;
const HEAD_PX = 47.9;
/** Rows rendered beyond each edge of the window: room for j/k and fast wheels. */
const OVERSCAN = 12;
/** Ask for the next page when the window comes within this many items of the loaded end. */
const AHEAD = 60;

/** What j/k need from a mounted virtual list. */
type Walker = { order: () => string[]; reveal: (id: string) => void; firstInView: () => string | undefined };
const walkers = new Set<Walker>();

/**
 * j/k across a virtual list: selects the to-do `by` rows from `from` in the list's whole loaded
 * order, scrolls it into view (it may not be in the DOM yet) and focuses its checkbox. With
 * nothing (or an unknown row) selected, starts at the first row in view. False when no virtual
 * list is mounted (the caller then walks the rows in the DOM, as before).
 */
export function walkVirtual(from: string | undefined, by: 1 | -1, select: (id: string) => void): boolean {
  const w = [...walkers][0];
  if (!w) return false;
  const ids = w.order();
  if (!ids.length) return true;
  const at = from ? ids.indexOf(from) : -1;
  const id = at < 0 ? (w.firstInView() ?? ids[0]!) : ids[Math.max(0, Math.min(ids.length - 1, at + by))]!;
  select(id);
  w.reveal(id);
  return true;
}

/** The row's element, once rendered. */
const rowEl = (root: HTMLElement | null, id: string) => root?.querySelector<HTMLElement>(`li[data-todo="${CSS.escape(id)}"]`) ?? null;

export function VirtualGroups({
  groups,
  more,
  loadingMore,
  loadMore,
  ...p
}: ListProps & { groups: VirtualGroup[]; more: boolean; loadingMore: boolean; loadMore: () => void }) {
  const items = useMemo(() => {
    const out: Item[] = [];
    groups.forEach((g, gi) => {
      out.push({ kind: 'head', g: gi, key: `h:${g.key}` });
      g.todos.forEach((t, i) => out.push({ kind: 'row', g: gi, i, key: `t:${t.id}` }));
    });
    return out;
  }, [groups]);
  const root = useRef<HTMLDivElement>(null);
  // Where the list starts in the page (the heading and quick entry sit above it): read when the
  // data or the window's size changes, not on every scroll frame (each read is a layout).
  const [margin, setMargin] = useState(0);
  const [width, setWidth] = useState(() => window.innerWidth);
  useEffect(() => {
    const onResize = () => setWidth(window.innerWidth);
    addEventListener('resize', onResize);
    return () => removeEventListener('resize', onResize);
  }, []);
  useLayoutEffect(() => {
    const top = root.current ? root.current.getBoundingClientRect().top + window.scrollY : 0;
    setMargin((m) => (Math.abs(top - m) > 0.5 ? top : m));
  }, [groups, width]);

  const v = useWindowVirtualizer({
    count: items.length,
    estimateSize: (i) => (items[i]?.kind === 'head' ? HEAD_PX : ROW_PX),
    getItemKey: (i) => items[i]?.key ?? i,
    overscan: OVERSCAN,
    scrollMargin: margin,
    // Unrounded heights (the page's own flow decides where rows sit), from the ResizeObserver's
    // entry when there is one (no extra layout); a heading's margins belong to it.
    measureElement: (el, entry) => {
      const h = entry?.borderBoxSize?.[0]?.blockSize ?? el.getBoundingClientRect().height;
      if (el.tagName !== 'H2') return h;
      const cs = getComputedStyle(el);
      return h + parseFloat(cs.marginTop) + parseFloat(cs.marginBottom);
    },
  });

  const live = useRef({ items, groups, v });
  live.current = { items, groups, v };
  useEffect(() => {
    const w: Walker = {
      order: () => live.current.groups.flatMap((g) => g.todos.map((t) => t.id)),
      firstInView: () => {
        for (const li of root.current?.querySelectorAll<HTMLElement>('li[data-todo]') ?? []) if (li.getBoundingClientRect().bottom > 0) return li.dataset.todo;
        return undefined;
      },
      reveal: (id) => {
        const focus = (el: HTMLElement) => {
          el.querySelector<HTMLElement>('input[type=checkbox]')?.focus({ preventScroll: true });
          el.scrollIntoView({ block: 'nearest' });
        };
        const now = rowEl(root.current, id);
        if (now) return focus(now);
        const index = live.current.items.findIndex((x) => x.key === `t:${id}`);
        if (index < 0) return;
        live.current.v.scrollToIndex(index, { align: 'center' });
        // The row renders on a later frame, once the virtualiser has seen the scroll.
        let frames = 0;
        const wait = () => {
          const el = rowEl(root.current, id);
          if (el) focus(el);
          else if (++frames < 60) requestAnimationFrame(wait);
        };
        requestAnimationFrame(wait);
      },
    };
    walkers.add(w);
    return () => void walkers.delete(w);
  }, []);

  const shown = v.getVirtualItems();
  const last = shown.at(-1);
  useEffect(() => {
    if (more && !loadingMore && last && last.index >= items.length - AHEAD) loadMore();
  }, [more, loadingMore, last?.index, items.length, loadMore]);

  // The rendered items, by group, in order.
  const blocks: { g: number; head?: VirtualItem; rows: VirtualItem[] }[] = [];
  for (const vi of shown) {
    const it = items[vi.index];
    if (!it) continue;
    let b = blocks.at(-1);
    if (!b || b.g !== it.g) blocks.push((b = { g: it.g, rows: [] }));
    if (it.kind === 'head') b.head = vi;
    else b.rows.push(vi);
  }
  const before = shown[0] ? shown[0].start - v.options.scrollMargin : 0;
  const after = last ? Math.max(0, v.getTotalSize() - (last.end - v.options.scrollMargin)) : 0;
  return (
    <div ref={root} className="virtual">
      <div aria-hidden="true" style={{ height: before }} />
      {blocks.map((b) => {
        const g = groups[b.g]!;
        // The last group may still grow while pages are left: its size is not known yet.
        const size = more && b.g === groups.length - 1 ? -1 : g.todos.length;
        return (
          <section key={g.key} aria-label={g.title}>
            {b.head && (
              <h2 data-index={b.head.index} ref={v.measureElement}>
                {g.title}
              </h2>
            )}
            {b.rows.length > 0 && <Rows v={v} label={g.title} rows={b.rows.map((r) => ({ vi: r, todo: g.todos[(items[r.index] as { i: number }).i]! }))} size={size} items={items} {...p} />}
          </section>
        );
      })}
      <div aria-hidden="true" style={{ height: after }} />
      {loadingMore && <p role="status">Loading more…</p>}
    </div>
  );
}

/** A row renders again only when its own props change (not on every scroll frame). */
const Row = memo(TodoRow);

/**
 * One group's rendered rows: TodoRow as it is (it renders its own `li`), then, after each
 * render, each `li` gets its item index (for the virtualiser's measuring) and its place in the
 * group (aria-posinset/aria-setsize; React never sets these, so it leaves them alone).
 */
function Rows({ v, label, rows, size, items, ...p }: ListProps & { v: Virtualizer<Window, Element>; label: string; rows: { vi: VirtualItem; todo: Todo }[]; size: number; items: Item[] }) {
  const ul = useRef<HTMLUListElement>(null);
  useLayoutEffect(() => {
    const lis = ul.current?.children;
    if (!lis) return;
    rows.forEach((r, k) => {
      const li = lis[k] as HTMLElement | undefined;
      if (!li || li.dataset.todo !== r.todo.id) return;
      const it = items[r.vi.index] as { i: number };
      li.dataset.index = String(r.vi.index);
      li.setAttribute('aria-posinset', String(it.i + 1));
      li.setAttribute('aria-setsize', String(size));
      v.measureElement(li);
    });
  });
  return (
    <ul className="todos" aria-label={label} ref={ul}>
      {rows.map((r) => (
        <Row key={r.todo.id} todo={r.todo} {...p} />
      ))}
    </ul>
  );
}
