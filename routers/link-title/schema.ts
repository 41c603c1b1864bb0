import { z } from 'zod';
import { LIMITS } from '../../core/config.js';
import { checkHttpUrl } from '../common.js';

/** Spec §4.16, §8.2: a URL of 1..2048 characters; http or https, no user name or password in it. */
export const LinkTitleInput = z
  .object({
    url: z
      .string()
      .min(1)
      .max(LIMITS.linkTitleUrl)
      .superRefine((value, ctx) => checkHttpUrl(value, ctx, { noUserinfo: true })),
  })
  .strict();

export const LinkTitle = z.object({
  title: z.string().nullable().meta({ description: "The page's og:title, else its <title>; null when the page could not be read" }),
  host: z.string().meta({ description: 'The host (and non-default port) of the URL sent' }),
});
