// Search folding (issue 14): case- and accent-insensitive matching. NFKD splits accented letters
// into base letter + combining marks (and compatibility forms such as ligatures and full-width
// letters into plain ones); the marks (\p{M}) are dropped; then the text is lower-cased.
// "Crème Brûlée" → "creme brulee"; "ＣＡＦÉ" → "cafe"; "ﬁle" → "file".
const MARKS = /\p{M}/gu;

export function fold(s: string): string {
  return s.normalize('NFKD').replace(MARKS, '').toLowerCase();
}

/**
 * The folded text with, for each folded UTF-16 unit, the offset in `s` of the character it came
 * from: a match in the folded text maps back to the original for a snippet.
 */
export function foldWithMap(s: string): { text: string; from: number[] } {
  let text = '';
  const from: number[] = [];
  let i = 0;
  for (const ch of s) {
    const f = fold(ch);
    text += f;
    for (let n = 0; n < f.length; n++) from.push(i);
    i += ch.length;
  }
  return { text, from };
}

/** The query's terms, folded: whitespace-separated, empty ones dropped. */
export function terms(q: string): string[] {
  return fold(q).split(/\s+/u).filter(Boolean);
}
