// The notes' Markdown renderer (docs/app.md "Serving": a chunk of its own, loaded on first use by
// `useMarkdown` in shared.tsx, so marked and DOMPurify are not in the first view's script).
// Notes are Markdown rendered through DOMPurify with a short list of tags and attributes: no
// script, no style attribute (the CSP would refuse it anyway), no image (no third-party origin),
// links only to http(s) and mailto.
import { Marked } from 'marked';
import DOMPurify from 'dompurify';

const PURIFY = {
  ALLOWED_TAGS: ['p', 'br', 'strong', 'em', 'del', 'code', 'pre', 'ul', 'ol', 'li', 'a', 'blockquote', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'table', 'thead', 'tbody', 'tr', 'th', 'td'],
  ALLOWED_ATTR: ['href', 'title'],
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:)/i,
};
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('rel', 'noopener noreferrer');
    node.setAttribute('target', '_blank');
  }
});
/**
 * Raw HTML inside the Markdown is shown as text, never parsed: even an inert parse of a `style`
 * or `on…` attribute makes Chromium report a CSP violation, and nothing a note needs is HTML.
 */
const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
const markdown = new Marked({ gfm: true, async: false, renderer: { html: ({ text }) => esc(text) } });

/** Markdown to sanitised HTML: the only way a note's HTML reaches the page. */
export function renderNotes(md: string): string {
  return DOMPurify.sanitize(markdown.parse(md, { async: false }), PURIFY);
}
