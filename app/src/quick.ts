// Quick entry (issue 32 item 4; docs/app.md "Quick entry"): what a person types, read into a
// to-do: Things' words (`today`, `this evening`/`tonight`, `someday`), `#tag` / `#"two words"`,
// `@Project` / `@"Two words"`, `due <date>` for a deadline, and any date chrono-node reads
// (`tomorrow`, `next friday`, `on 3 march`) for when. The chips show what was recognised.
import * as chrono from 'chrono-node/en';
import { ymd } from './dates.js';

export type Parsed = {
  title: string;
  whenDate?: string;
  evening?: boolean;
  someday?: boolean;
  deadline?: string;
  tags: string[];
  project?: { id: string; name: string };
  /** What was recognised, in words, for the "Recognised" chips. */
  chips: string[];
};

const fmt = (d: string) => new Date(`${d}T12:00:00`).toLocaleDateString(undefined, { weekday: 'short', month: 'short', day: 'numeric' });

export function parseQuick(input: string, now: Date, projects: { id: string; name: string }[]): Parsed {
  let text = ` ${input} `;
  const out: Parsed = { title: '', tags: [], chips: [] };
  const cut = (m: RegExpExecArray) => {
    text = text.slice(0, m.index) + ' ' + text.slice(m.index + m[0].length);
  };
  // Tags: #"two words" first, then #word.
  for (const re of [/\s#"([^"]+)"(?=\s)/, /\s#([^\s#"@]+)(?=\s)/]) {
    for (let m = re.exec(text); m; m = re.exec(text)) {
      const tag = m[1]!.trim();
      if (tag && !out.tags.includes(tag)) out.tags.push(tag);
      cut(m);
    }
  }
  for (const t of out.tags) out.chips.push(`Tag: ${t}`);
  // @Project or @"Two words": the longest project name the text starts with, case-insensitively.
  const at = /\s@("([^"]+)"|(\S+(?:\s+\S+)*?))(?=\s|$)/.exec(text);
  if (at) {
    const after = text.slice(at.index + 2).replace(/^"/, '');
    const lower = after.toLowerCase();
    const hit = [...projects].sort((a, b) => b.name.length - a.name.length).find((p) => lower.startsWith(p.name.toLowerCase()) && /^(\s|"|$)/.test(after.slice(p.name.length)));
    if (hit) {
      out.project = hit;
      const len = 2 + (at[2] ? at[2].length + 2 : hit.name.length);
      text = text.slice(0, at.index) + ' ' + text.slice(at.index + len);
      out.chips.push(`Project: ${hit.name}`);
    }
  }
  // `due <date>`: a deadline.
  const due = /\sdue\s+/i.exec(text);
  if (due) {
    const rest = text.slice(due.index + due[0].length);
    const r = chrono.casual.parse(rest, now, { forwardDate: true })[0];
    if (r && r.index === 0) {
      out.deadline = ymd(r.start.date());
      text = text.slice(0, due.index) + ' ' + rest.slice(r.text.length);
      out.chips.push(`Deadline: ${fmt(out.deadline)}`);
    }
  }
  // Things' words.
  const evening = /\s(this evening|tonight)(?=\s)/i.exec(text);
  if (evening) {
    out.whenDate = ymd(now);
    out.evening = true;
    cut(evening);
    out.chips.push('When: This Evening');
  }
  const someday = /\ssomeday(?=\s)/i.exec(text);
  if (someday && !out.whenDate) {
    out.someday = true;
    cut(someday);
    out.chips.push('When: Someday');
  }
  if (!out.whenDate && !out.someday) {
    const today = /\stoday(?=\s)/i.exec(text);
    if (today) {
      out.whenDate = ymd(now);
      cut(today);
      out.chips.push('When: Today');
    } else {
      const r = chrono.casual.parse(text, now, { forwardDate: true })[0];
      if (r) {
        out.whenDate = ymd(r.start.date());
        text = text.slice(0, r.index) + ' ' + text.slice(r.index + r.text.length);
        out.chips.push(`When: ${out.whenDate === ymd(now) ? 'Today' : fmt(out.whenDate)}`);
      }
    }
  }
  out.title = text.replace(/\s+/g, ' ').trim();
  return out;
}
