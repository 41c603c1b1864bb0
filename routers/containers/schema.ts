import { z } from 'zod';
import { LIMITS } from '../../core/config.js';
import { ClientId, IdRef } from '../../core/ids.js';
import { ListQueryShape, boolParam } from '../../db/paging.js';
import { ColorHex, DateOnly, DateOut, Symbol, Timestamp, PathId } from '../common.js';
import { CONTAINER_KINDS } from '../../db/schema/index.js';

export const ContainerKind = z.enum(CONTAINER_KINDS);
export const Priority = z.enum(['low', 'medium', 'high']);
export const ContainerStatus = z.enum(['active', 'archived']);

const Name = z.string().min(1).max(LIMITS.container.name);
const Subtitle = z.string().max(LIMITS.container.subtitle);
const Notes = z.string().max(LIMITS.container.notes);

/** Spec §2.1: every field of the create table; unknown properties refused. */
export const CreateContainerInput = z
  .object({
    kind: ContainerKind,
    name: Name,
    parentId: IdRef.nullable().optional(),
    subtitle: Subtitle.nullable().optional(),
    notes: Notes.nullable().optional(),
    symbol: Symbol.nullable().optional(),
    colorHex: ColorHex.nullable().optional(),
    deadline: DateOnly.nullable().optional(),
    priority: Priority.nullable().optional(),
    id: ClientId.optional(),
  })
  .strict();

/** Spec §4.4: a subset of the content fields; `parentId` and `kind` are refused with a pointer. */
export const UpdateContainerInput = z.strictObject(
  {
    id: PathId,
    name: Name.optional(),
    subtitle: Subtitle.nullable().optional(),
    notes: Notes.nullable().optional(),
    symbol: Symbol.nullable().optional(),
    colorHex: ColorHex.nullable().optional(),
    deadline: DateOnly.nullable().optional(),
    priority: Priority.nullable().optional(),
  },
  {
    error: (iss) => {
      if (iss.code !== 'unrecognized_keys') return undefined;
      if (iss.keys.includes('parentId')) return 'parentId is changed through POST /v1/containers/{id}/move';
      if (iss.keys.includes('kind')) return 'kind cannot be changed after create';
      return undefined;
    },
  },
);

/** DECISIONS §6: move to another parent (or to the top level with null), after/before a sibling. */
export const MoveContainerInput = z
  .object({
    id: PathId,
    parentId: IdRef.nullable(),
    after: IdRef.nullable().optional(),
    before: IdRef.nullable().optional(),
  })
  .strict();

export const ListContainersInput = z
  .object({
    ...ListQueryShape,
    kind: ContainerKind.optional(),
    parent_id: IdRef.optional().meta({ description: 'Only children of this container; the literal `null` for top-level containers.' }),
    status: ContainerStatus.optional().meta({ description: 'Filters on the sealed status: decrypts inside the request (may be account_too_large).' }),
    include_trashed: boolParam.meta({ description: 'Include trashed containers and containers inside them (default false).' }),
  })
  .strict();

export const Container = z.object({
  id: z.string(),
  kind: ContainerKind,
  name: z.string(),
  parentId: z.string().nullable(),
  subtitle: z.string().nullable(),
  notes: z.string().nullable(),
  symbol: z.string().nullable(),
  colorHex: z.string().nullable(),
  deadline: DateOut.nullable(),
  priority: Priority.nullable(),
  status: ContainerStatus,
  sortKey: z.string(),
  trashedAt: Timestamp.nullable(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type ContainerOut = z.infer<typeof Container>;
