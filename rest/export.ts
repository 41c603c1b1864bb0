// GET /v1/export (issue 33 item 2; docs/api.md "Export"): the caller's whole account, opened, as
// the streamed JSON document of routers/export/stream.ts. A plain route (server/app.ts) because
// the answer is written piece by piece with back-pressure, never built whole, which a procedure's
// answer cannot be. First-party sessions only, as /v1/keys: it is every piece of content at once.
import type { NextFunction, Request, Response } from 'express';
import type { Deps } from '../routers/deps.js';
import { exportPieces } from '../routers/export/stream.js';
import { requestState } from './state.js';
import { plainPrincipal } from './plain-auth.js';

export function exportAccount(deps: Deps) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    let pieces: AsyncGenerator<string>;
    try {
      const principal = await plainPrincipal(deps, req, { firstPartyOnly: true }, false);
      pieces = exportPieces(deps, principal);
      // The first piece is read before the headers go: a fault there is still a problem answer.
      const first = await pieces.next();
      res.status(200);
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('Content-Disposition', 'attachment; filename="cairn-export.json"');
      res.setHeader('X-Content-Type-Options', 'nosniff');
      if (!first.done) res.write(first.value);
    } catch (e) {
      return next(e);
    }
    try {
      for await (const piece of pieces) {
        if (res.destroyed) return void (await pieces.return(undefined));
        if (!res.write(piece)) await new Promise<void>((resolve) => {
          const done = () => {
            res.off('drain', done);
            res.off('close', done);
            resolve();
          };
          res.on('drain', done);
          res.on('close', done);
        });
      }
      res.end();
    } catch (err) {
      // Headers are gone: cutting the connection is the only honest answer (the JSON is unfinished).
      deps.log.error({ requestId: requestState(req).requestId, err }, 'export failed while streaming; connection destroyed');
      res.destroy();
    }
  };
}
