// Saved-filter criteria (DECISIONS §6): a boolean expression over tags and a few date/flag terms,
// parsed by a hand-written recursive-descent parser. Grammar (keywords case-insensitive):
//
//   expr    := andExpr (("or" | "|") andExpr)*
//   andExpr := unary (("and" | "&") unary)*
//   unary   := ("not" | "!") unary | primary
//   primary := "(" expr ")" | tag | "today" | "overdue" | "someday" | "no" "date"
//            | "priority:" ("high" | "medium" | "low")
//   tag     := "#" bare | "#" '"' chars '"'      (inside quotes, \" and \\ escape)
//
// So `not` binds tighter than `and`, and `and` tighter than `or`. A bare tag name runs until
// whitespace or one of ( ) & | ! ". A syntax error names its 1-based column.

export type Criteria =
  | { k: 'or' | 'and'; l: Criteria; r: Criteria }
  | { k: 'not'; e: Criteria }
  | { k: 'tag'; name: string }
  | { k: 'today' | 'overdue' | 'someday' | 'nodate' }
  | { k: 'priority'; v: 'high' | 'medium' | 'low' };

export class CriteriaError extends Error {
  constructor(
    readonly column: number,
    message: string,
  ) {
    super(`column ${column}: ${message}`);
  }
}

type Tok =
  | { t: 'tag'; v: string; col: number }
  | { t: 'word'; v: string; col: number }
  | { t: '(' | ')' | '&' | '|' | '!'; col: number }
  | { t: 'end'; col: number };

/** Parentheses and `not`s nested deeper than this are refused (the parser recurses). */
const MAX_DEPTH = 100;

const SPECIAL = new Set(['(', ')', '&', '|', '!', '"']);

function tokenize(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  const isSpace = (c: string) => /\s/u.test(c);
  while (i < src.length) {
    const c = src[i]!;
    const col = i + 1;
    if (isSpace(c)) {
      i++;
      continue;
    }
    if (c === '(' || c === ')' || c === '&' || c === '|' || c === '!') {
      out.push({ t: c, col });
      i++;
      continue;
    }
    if (c === '#') {
      i++;
      if (src[i] === '"') {
        i++;
        let name = '';
        for (;;) {
          if (i >= src.length) throw new CriteriaError(col, 'unterminated quoted tag name (missing closing ")');
          const d = src[i]!;
          if (d === '\\' && (src[i + 1] === '"' || src[i + 1] === '\\')) {
            name += src[i + 1];
            i += 2;
          } else if (d === '"') {
            i++;
            break;
          } else {
            name += d;
            i++;
          }
        }
        if (!name.trim()) throw new CriteriaError(col, 'empty tag name');
        out.push({ t: 'tag', v: name, col });
      } else {
        const start = i;
        while (i < src.length && !isSpace(src[i]!) && !SPECIAL.has(src[i]!)) i++;
        if (i === start) throw new CriteriaError(col, 'expected a tag name after #');
        out.push({ t: 'tag', v: src.slice(start, i), col });
      }
      continue;
    }
    if (c === '"') throw new CriteriaError(col, 'a quoted name must follow # (write #"two words")');
    const start = i;
    while (i < src.length && !isSpace(src[i]!) && !SPECIAL.has(src[i]!) && src[i] !== '#') i++;
    out.push({ t: 'word', v: src.slice(start, i), col });
  }
  out.push({ t: 'end', col: src.length + 1 });
  return out;
}

export function parseCriteria(src: string): Criteria {
  const toks = tokenize(src);
  let pos = 0;
  let depth = 0;
  const deeper = (col: number) => {
    if (++depth > MAX_DEPTH) throw new CriteriaError(col, `nested more than ${MAX_DEPTH} levels deep`);
  };
  const peek = () => toks[pos]!;
  const isWord = (tok: Tok, w: string) => tok.t === 'word' && tok.v.toLowerCase() === w;
  const describe = (tok: Tok) => (tok.t === 'end' ? 'end of input' : tok.t === 'word' ? `"${tok.v}"` : tok.t === 'tag' ? `tag #${tok.v}` : `"${tok.t}"`);

  function expr(): Criteria {
    let l = andExpr();
    while (peek().t === '|' || isWord(peek(), 'or')) {
      pos++;
      l = { k: 'or', l, r: andExpr() };
    }
    return l;
  }
  function andExpr(): Criteria {
    let l = unary();
    while (peek().t === '&' || isWord(peek(), 'and')) {
      pos++;
      l = { k: 'and', l, r: unary() };
    }
    return l;
  }
  function unary(): Criteria {
    if (peek().t === '!' || isWord(peek(), 'not')) {
      deeper(peek().col);
      pos++;
      const e: Criteria = { k: 'not', e: unary() };
      depth--;
      return e;
    }
    return primary();
  }
  function primary(): Criteria {
    const tok = peek();
    if (tok.t === '(') {
      deeper(tok.col);
      pos++;
      const e = expr();
      depth--;
      const close = peek();
      if (close.t !== ')') throw new CriteriaError(close.col, `expected ")" to close the "(" at column ${tok.col}, found ${describe(close)}`);
      pos++;
      return e;
    }
    if (tok.t === 'tag') {
      pos++;
      return { k: 'tag', name: tok.v };
    }
    if (tok.t === 'word') {
      const w = tok.v.toLowerCase();
      if (w === 'today' || w === 'overdue' || w === 'someday') {
        pos++;
        return { k: w };
      }
      if (w === 'no') {
        const next = toks[pos + 1]!;
        if (!isWord(next, 'date')) throw new CriteriaError(next.col, `expected "date" after "no", found ${describe(next)}`);
        pos += 2;
        return { k: 'nodate' };
      }
      const m = /^priority:(.*)$/.exec(w);
      if (m) {
        if (m[1] !== 'high' && m[1] !== 'medium' && m[1] !== 'low') throw new CriteriaError(tok.col, 'priority must be priority:high, priority:medium or priority:low');
        pos++;
        return { k: 'priority', v: m[1] };
      }
    }
    throw new CriteriaError(tok.col, `expected a tag (#name), today, overdue, someday, no date, priority:… or "(", found ${describe(tok)}`);
  }

  const e = expr();
  const rest = peek();
  if (rest.t !== 'end') throw new CriteriaError(rest.col, `expected and, or or the end, found ${describe(rest)}`);
  return e;
}

/** Tag names the criteria refer to (for resolving them to tag ids once per evaluation). */
export function tagNamesIn(c: Criteria, out: Set<string> = new Set()): Set<string> {
  if (c.k === 'tag') out.add(c.name);
  else if (c.k === 'and' || c.k === 'or') {
    tagNamesIn(c.l, out);
    tagNamesIn(c.r, out);
  } else if (c.k === 'not') tagNamesIn(c.e, out);
  return out;
}

/** What a to-do offers the criteria. */
export type Subject = {
  hasTag: (name: string) => boolean;
  whenDate: string | null;
  deadline: string | null;
  someday: boolean;
  priority: 'low' | 'medium' | 'high' | null;
};

export function evaluate(c: Criteria, s: Subject, today: string): boolean {
  switch (c.k) {
    case 'or':
      return evaluate(c.l, s, today) || evaluate(c.r, s, today);
    case 'and':
      return evaluate(c.l, s, today) && evaluate(c.r, s, today);
    case 'not':
      return !evaluate(c.e, s, today);
    case 'tag':
      return s.hasTag(c.name);
    case 'today':
      return (s.whenDate !== null && s.whenDate <= today) || (s.deadline !== null && s.deadline <= today);
    case 'overdue':
      return s.deadline !== null && s.deadline < today;
    case 'someday':
      return s.someday;
    case 'nodate':
      return s.whenDate === null && s.deadline === null;
    case 'priority':
      return s.priority === c.v;
  }
}
