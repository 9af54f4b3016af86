import { agent } from './agent/index.ts';
import { analytics } from './analytics/index.ts';
import { client } from './client/index.ts';
import { events } from './events/index.ts';
import { liquidations } from './liquidations/index.ts';
import { markets } from './markets/index.ts';
import { oracles } from './oracles/index.ts';
import { portfolios } from './portfolios/index.ts';
import { positions } from './positions/index.ts';
import { ratings } from './ratings/index.ts';
import { research } from './research/index.ts';
import { risk } from './risk/index.ts';
import { service } from './service/index.ts';
import { tokens } from './tokens/index.ts';
import type { Area } from './types.ts';
import { vaults } from './vaults/index.ts';

/**
 * Every area of the API, once: its routes are registered from here (routes/index.ts), and the
 * OpenAPI document takes its tags (in this order, each named once) and its named schemas from
 * here (plugins/openapi.ts). Areas of one scope register in this order.
 */
export const AREAS: readonly Area[] = [
  markets,
  tokens,
  oracles,
  vaults,
  positions,
  liquidations,
  portfolios,
  risk,
  events,
  analytics,
  agent,
  ratings,
  research,
  client,
  service,
];
