import { z } from 'zod';
import { authedProcedure, publicProcedure, router } from '../trpc.js';
import { EmptyBody } from '../common.js';
import * as m from './model.js';
import { ChangePasswordInput, LoginInput, Registered, RegisterInput, RotateKeyInput, SessionToken } from './schema.js';

const tags = ['auth'];

export const authRouter = router({
  register: publicProcedure
    .meta({ secretInAnswer: true, public: true, successStatus: 201, openapi: { method: 'POST', path: '/v1/auth/register', protect: false, tags, summary: 'Create an account and a first-party session' } })
    .input(RegisterInput)
    .output(Registered)
    .mutation(({ ctx, input }) => m.register(ctx.deps, input)),

  login: publicProcedure
    .meta({ secretInAnswer: true, public: true, openapi: { method: 'POST', path: '/v1/auth/login', protect: false, tags, summary: 'Start a first-party session' } })
    .input(LoginInput)
    .output(SessionToken)
    .mutation(({ ctx, input }) => m.login(ctx.deps, input)),

  logout: authedProcedure
    .meta({ firstPartyOnly: true, successStatus: 204, openapi: { method: 'POST', path: '/v1/auth/logout', tags, summary: 'End this session' } })
    .input(EmptyBody.optional())
    .output(z.void())
    .mutation(({ ctx }) => m.logout(ctx.deps, ctx.principal)),

  changePassword: authedProcedure
    .meta({ secretInAnswer: true, firstPartyOnly: true, openapi: { method: 'POST', path: '/v1/auth/password', tags, summary: 'Change the password; disconnects every other credential (spec §5.4)' } })
    .input(ChangePasswordInput)
    .output(SessionToken)
    .mutation(({ ctx, input }) => m.changePassword(ctx.deps, ctx.principal, input)),

  rotateKey: authedProcedure
    .meta({ secretInAnswer: true, firstPartyOnly: true, openapi: { method: 'POST', path: '/v1/auth/rotate-key', tags, summary: 'Re-seal everything under a new data key; disconnects every other credential (spec §5.4)' } })
    .input(RotateKeyInput)
    .output(SessionToken)
    .mutation(({ ctx, input }) => m.rotateKey(ctx.deps, ctx.principal, input)),

  revokeAll: authedProcedure
    .meta({ firstPartyOnly: true, successStatus: 204, openapi: { method: 'POST', path: '/v1/auth/revoke-all', tags, summary: 'Disconnect every token, key, session and grant, this one included (spec §5.4)' } })
    .input(EmptyBody.optional())
    .output(z.void())
    .mutation(({ ctx }) => m.revokeAll(ctx.deps, ctx.principal)),
});
