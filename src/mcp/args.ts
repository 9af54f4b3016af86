import { z } from 'zod';
import { DEFAULT_LIMIT } from '../access/clamp.ts';
import { PROTOCOLS } from '../domain/enums.ts';

/**
 * Tool arguments shared by several tools, described as the HTTP routes describe their query
 * parameters. Lists are JSON arrays here (`chainIds: [1, 8453]`) where a query string has a
 * comma-separated value.
 */

export const limitArg = (max: number) =>
  z
    .int()
    .min(1)
    .optional()
    .describe(
      `Maximum results (default ${DEFAULT_LIMIT}). Values above min(${max}, the tier's result cap) are lowered silently and reported in meta.clamped.`,
    );

export const protocolArg = z.enum(PROTOCOLS).optional().describe('Only markets of this protocol.');

export const chainIdsArg = z
  .array(z.int().min(0).max(999_999_999_999))
  .min(1)
  .max(100)
  .optional()
  .describe(
    "Chain ids, e.g. [1, 8453]. Filtered to the tier's chains (reported in meta.clamped); omitted, the scope is the tier's chains.",
  );

export const marketIdArg = (description: string) => z.string().min(1).max(256).describe(description);
