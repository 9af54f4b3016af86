import { Type } from '@fastify/type-provider-typebox';
import { PROTOCOLS, type Protocol } from '../../../domain/enums.ts';
import type { EventFilters } from '../../../domain/records/events.ts';
import type { RouteDeps } from '../../context.ts';
import { callerOf } from '../../context.ts';
import { ApiError, invalidParameter, type ParameterProblem } from '../../errors.ts';
import { ChainIdsParam, parseChainIds } from '../../params.ts';
import { RATE_HEADERS, REQUEST_ID_HEADER } from '../../schemas.ts';
import { normalizeFilters, RISK_EVENT_TYPES } from '../client/webhooks-shared.ts';
import type { Api } from '../types.ts';

const list = (raw: string | undefined) =>
  raw === undefined
    ? undefined
    : raw
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');

export function registerEventStream(app: Api, deps: RouteDeps): void {
  app.get(
    '/events/stream',
    {
      config: { access: { category: 'risk' }, errors: ['STREAM_LIMIT_REACHED'] },
      schema: {
        operationId: 'streamEvents',
        summary: 'Risk events as server-sent events',
        description:
          'A `text/event-stream` of the risk events matching the filters, each sent with `id:` (the event id), ' +
          '`event:` (its type) and `data:` (the event as JSON, as a webhook receives it). A comment line is sent ' +
          "every 15 s on an idle stream. After a disconnect, reconnect with the `Last-Event-ID` header (browsers' " +
          'EventSource does it): the events that followed that one are replayed from the retained log (7 days by ' +
          'default), then the stream goes on. Without it, the stream starts from now.\n\n' +
          'Opening a stream counts as one request. A key may hold `maxStreamsPerKey` streams open at once (Pro 2, ' +
          'Enterprise 20: 429 `STREAM_LIMIT_REACHED`). A reader that falls more than 1 MiB behind is disconnected ' +
          '(it resumes with `Last-Event-ID`). Events are not guaranteed to arrive in the order they happened.',
        querystring: Type.Object(
          {
            types: Type.Optional(
              Type.String({
                maxLength: 200,
                description: `Comma-separated event types (default all: ${RISK_EVENT_TYPES.join(', ')}).`,
              }),
            ),
            chainIds: Type.Optional(ChainIdsParam),
            protocols: Type.Optional(
              Type.String({
                maxLength: 200,
                description: `Comma-separated protocols (${PROTOCOLS.join(', ')}).`,
              }),
            ),
            marketIds: Type.Optional(
              Type.String({
                maxLength: 20_000,
                description: 'Comma-separated market uniqueKeys (at most 100).',
              }),
            ),
            wallets: Type.Optional(
              Type.String({
                maxLength: 5_000,
                description: 'Comma-separated wallet addresses (at most 100).',
              }),
            ),
            healthFactorBelow: Type.Optional(
              Type.Number({
                exclusiveMinimum: 0,
                maximum: 10,
                description:
                  'position.health_factor_below fires when a health factor crosses below this (default 1.1).',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        headers: Type.Object({
          'Last-Event-ID': Type.Optional(
            Type.String({
              maxLength: 64,
              description: 'The id of the last event received: replay what followed it.',
            }),
          ),
        }),
        response: {
          200: {
            description: 'The stream (it does not end until the client disconnects).',
            content: {
              'text/event-stream': {
                schema: { type: 'string' },
                example:
                  'id: evt_2f0c9a1b3d4e5f60718293a4\nevent: position.health_factor_below\ndata: {"id":"evt_2f0c9a1b3d4e5f60718293a4","type":"position.health_factor_below","createdAt":"2026-11-22T12:00:05.000Z","data":{…}}\n\n',
              },
            },
            headers: { ...REQUEST_ID_HEADER, ...RATE_HEADERS },
          },
        },
      },
    },
    async (request, reply) => {
      const { key, tier } = callerOf(request);
      const q = request.query;
      const problems: ParameterProblem[] = [];
      const types = list(q.types) ?? [...RISK_EVENT_TYPES];
      for (const t of types)
        if (!(RISK_EVENT_TYPES as readonly string[]).includes(t))
          problems.push({ parameter: 'types', problem: `unknown event type '${t.slice(0, 40)}'` });
      const protocols = list(q.protocols);
      for (const p of protocols ?? [])
        if (!(PROTOCOLS as readonly string[]).includes(p))
          problems.push({ parameter: 'protocols', problem: `unknown protocol '${p.slice(0, 40)}'` });
      const marketIds = list(q.marketIds);
      const wallets = list(q.wallets);
      for (const [name, l] of [
        ['marketIds', marketIds],
        ['wallets', wallets],
      ] as const)
        if (l && l.length > 100) problems.push({ parameter: name, problem: 'at most 100' });
      for (const w of wallets ?? [])
        if (!/^0x[0-9a-fA-F]{40}$/.test(w))
          problems.push({ parameter: 'wallets', problem: `'${w.slice(0, 50)}' is not an address` });
      if (problems.length > 0) throw invalidParameter(problems);
      const raw: EventFilters = {};
      const chains = parseChainIds(q.chainIds);
      if (chains) raw.chainIds = chains;
      if (protocols?.length) raw.protocols = protocols as Protocol[];
      if (marketIds?.length) raw.marketIds = marketIds;
      if (wallets?.length) raw.wallets = wallets;
      if (q.healthFactorBelow !== undefined) raw.healthFactorBelow = q.healthFactorBelow;
      const filters = normalizeFilters(raw, tier, '');
      const streams = deps.events.streams;
      // The key's streams on every server of the store count together.
      const slot =
        tier.maxStreamsPerKey === null ? null : await streams.claimSlot(key.id, tier.maxStreamsPerKey);
      if (tier.maxStreamsPerKey !== null && slot === null)
        throw new ApiError(
          'STREAM_LIMIT_REACHED',
          `This key holds ${tier.maxStreamsPerKey} event streams open, the most the ${tier.name} tier allows; ` +
            'retry after one closes.',
          { tier: tier.id, limit: tier.maxStreamsPerKey, retryAfter: 5 },
          { 'retry-after': '5' },
        );
      const lastEventId = request.headers['last-event-id'];
      reply.hijack();
      const res = reply.raw;
      // The stream keeps itself alive; the socket's idle timeout would cut a quiet one.
      request.raw.socket.setTimeout(0);
      // The headers the access pipeline set (request id, rate limits) go with the stream's own.
      for (const [name, value] of Object.entries(reply.getHeaders()))
        if (value !== undefined) res.setHeader(name, value as string | number | string[]);
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        'x-accel-buffering': 'no',
      });
      const sink = {
        write: (text: string) => {
          if (!res.destroyed) res.write(text);
          return res.writableLength;
        },
        close: () => {
          if (!res.destroyed) res.end();
        },
      };
      try {
        const close = await streams.open(
          {
            accountId: key.accountId,
            keyId: key.id,
            mode: key.mode,
            types: types as (typeof RISK_EVENT_TYPES)[number][],
            filters,
            lastEventId: typeof lastEventId === 'string' && lastEventId !== '' ? lastEventId : null,
            slot,
          },
          sink,
        );
        res.on('close', close);
        if (res.destroyed) close();
      } catch (err) {
        request.log.warn({ err }, 'event stream could not start');
        sink.close();
      }
    },
  );
}
