// Issue 13 item 10: the /errors pages render their text as HTML (no literal Markdown) and show an
// example problem of their type, shaped like the problems the API really sends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call } from '../helpers/http.js';
import { ERROR_TABLE } from '../../core/errors.js';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.close());

const unescape = (s: string) => s.replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n)));

describe('/errors pages', () => {
  it('every page renders its text without Markdown and shows an example problem of its type', async () => {
    for (const [code, e] of Object.entries(ERROR_TABLE)) {
      const r = await fetch(`${app.url}/errors/${code}`);
      expect(r.status).toBe(200);
      const html = await r.text();
      const text = html.replace(/<style>[\s\S]*?<\/style>/, '');
      expect(text, code).not.toMatch(/[`*]/);
      if (e.about.includes('`')) expect(text).toMatch(/<code>[^<]+<\/code>/);
      const pre = /<pre>([\s\S]*?)<\/pre>/.exec(html);
      expect(pre, code).not.toBeNull();
      const [head, body] = unescape(pre![1]!).split('\n\n');
      expect(head!.split('\n')[0]).toBe(`HTTP/1.1 ${e.status} ${e.title}`);
      const problem = JSON.parse(body!);
      expect(problem).toMatchObject({ type: `${app.deps.config.publicUrl}/errors/${code}`, title: e.title, status: e.status });
    }
    const index = await (await fetch(`${app.url}/errors`)).text();
    expect(index.replace(/<style>[\s\S]*?<\/style>/, '')).not.toMatch(/`/);
  });

  it("the validation_failed example has the fields of a real answer", async () => {
    const real = await call(app, 'POST', '/v1/auth/register', { body: { email: 'x@example.test', password: '' } });
    expect(real.status).toBe(422);
    const html = await (await fetch(`${app.url}/errors/validation_failed`)).text();
    const example = JSON.parse(unescape(/<pre>([\s\S]*?)<\/pre>/.exec(html)![1]!).split('\n\n')[1]!);
    expect(Object.keys(example).sort()).toEqual(Object.keys(real.body).sort());
    expect(Object.keys(example.errors[0]).sort()).toEqual(Object.keys(real.body.errors[0]).sort());
  });
});
