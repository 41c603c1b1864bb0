import { authedProcedure, router, type Meta } from '../trpc.js';
import * as m from './model.js';
import { GroupedView, LogbookInput, LogbookView, OverviewView, PagedViewInput, TodayView, UpcomingView, ViewInput } from './schema.js';

const tags = ['views'];
const scopes = ['todos:read' as const, 'containers:read' as const];
const get = (path: string, summary: string): Meta => ({ scopes: [...scopes], openapi: { method: 'GET' as const, path: `/v1/views/${path}` as const, tags, summary } });

export const viewsRouter = router({
  overview: authedProcedure
    .meta(get('overview', 'Counts per view and open counts per live container'))
    .input(ViewInput)
    .output(OverviewView)
    .query(({ ctx, input }) => m.overviewView(ctx.deps, ctx.principal, input)),

  today: authedProcedure
    .meta(get('today', 'Open to-dos whose when-date or deadline has come, and this evening'))
    .input(ViewInput)
    .output(TodayView)
    .query(({ ctx, input }) => m.todayView(ctx.deps, ctx.principal, input)),

  upcoming: authedProcedure
    .meta(get('upcoming', 'Open to-dos with future dates by day, with recurring occurrences of the next 14 days'))
    .input(ViewInput)
    .output(UpcomingView)
    .query(({ ctx, input }) => m.upcomingView(ctx.deps, ctx.principal, input)),

  anytime: authedProcedure
    .meta(get('anytime', 'Open to-dos available now, grouped by container, paged'))
    .input(PagedViewInput)
    .output(GroupedView)
    .query(({ ctx, input }) => m.anytimeView(ctx.deps, ctx.principal, input)),

  someday: authedProcedure
    .meta(get('someday', 'Open someday to-dos, grouped by container, paged'))
    .input(PagedViewInput)
    .output(GroupedView)
    .query(({ ctx, input }) => m.somedayView(ctx.deps, ctx.principal, input)),

  logbook: authedProcedure
    .meta(get('logbook', 'Completed and canceled to-dos, newest first, by day, paged'))
    .input(LogbookInput)
    .output(LogbookView)
    .query(({ ctx, input }) => m.logbookView(ctx.deps, ctx.principal, input)),
});
