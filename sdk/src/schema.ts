// Generated from sdk/openapi.json (sha256 94e73a81bc4ee178363bfbf23be016cddcbdb02505adeec3a9b47b50c33819af) by openapi-typescript; do not edit: npm run generate in sdk/.
export interface paths {
    "/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Where things are
         * @description The paths of the documentation, the OpenAPI document, health and the main resources, as paths on this server. No key needed; not counted. `GET /` answers the same.
         */
        get: operations["apiRoot"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/agent/market-brief/{marketId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A market in brief, for agents
         * @description A market in one sentence, its key figures, flags with their reasons (LIQUIDATABLE_POSITIONS, HIGH_UTILIZATION at 95 % or more, STALE_ORACLE, NO_ORACLE, CONCENTRATED_BORROWERS at a Herfindahl index of 0.25 or more, BAD_DEBT_UNDER_STRESS when a 20 % collateral fall leaves bad debt, THIN_LIQUIDITY when a 10 % fall would repay more than the market holds, NO_USD_PRICE when a token has no USD price: its price null and, for the loan token, the USD figures; no position served) and its 10 and 20 % collateral stress. The figures are those of GET /risk/markets/{marketId}.
         */
        get: operations["agentMarketBrief"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/agent/mcp": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * MCP server (Streamable HTTP)
         * @description The [Model Context Protocol](https://modelcontextprotocol.io) server of the agent API, over Streamable HTTP in stateless mode: connect an MCP client to this URL with your key in `Authorization: Bearer <API_KEY>`.
         *
         *     POST one JSON-RPC message (or a batch) with `Content-Type: application/json` and `Accept: application/json, text/event-stream`; the answer is JSON (no SSE stream, no session id): 200 with the JSON-RPC answer, 202 without a body for notifications. GET (a server-sent event stream) and DELETE (the end of a session) are not offered: 405. Methods: `initialize`, `ping`, `tools/list`, `tools/call`. A batch holds at most 20 messages, and the ids of its requests must differ (400 `INVALID_PARAMETER` otherwise, nothing run or counted). A `tools/call` whose `name` is not a string or whose `arguments` is not an object is answered with the JSON-RPC error -32602 (Invalid params), not counted.
         *
         *     Tools: `search_markets`, `get_market`, `positions_at_risk`, `wallet_risk`, `stress_test`, `market_brief`, each calling the query of its HTTP route (`search_markets`: `GET /markets/search`); a tool result carries `{ data, meta }` as the route answers it, as JSON text and as `structuredContent`.
         *
         *     Limits: each `tools/call` is one request: it takes one slot of the per-second window and counts against the daily and monthly quotas (an HTTP request carrying tool calls takes no slot of its own); an HTTP request without one (initialize, ping, tools/list) takes one slot and is not counted. A refused call is a tool result with `isError: true` and the error body of the HTTP API (`RATE_LIMIT_EXCEEDED`, `DAILY_QUOTA_EXCEEDED`, `MONTHLY_QUOTA_EXCEEDED` with `retryAfter` in seconds; `TIER_FORBIDDEN`, `CHAIN_FORBIDDEN`, `INVALID_PARAMETER`, `MARKET_NOT_FOUND`). Tier rules apply to the arguments as to query parameters: `limit` is lowered to min(the tool's maximum, the tier's result cap) and `chainIds` filtered to the tier's chains (reported in `meta.clamped`).
         */
        post: operations["mcp"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/agent/wallet-risk/{address}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A wallet's risk, for agents
         * @description A wallet's borrow positions in the chains in scope, weakest first, with a risk level, flags with their reasons (LIQUIDATABLE below health factor 1, NEAR_LIQUIDATION below 1.1, BELOW_TARGET, STALE_ORACLE), and for each position the debt to repay, or the collateral to add, that brings it to `targetHealthFactor`. Deterministic: the same data gives the same answer.
         */
        get: operations["agentWalletRisk"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/analytics/overview": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Overview
         * @description Now, in the chains in scope: markets, supply, borrow, utilization, positions, positions with debt, positions at risk (health factor below 1.1) and liquidatable (below 1) with the debt at risk; in total, by protocol and by chain (largest supply first). Utilization is borrow / supply of the sums.
         */
        get: operations["analyticsOverview"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/analytics/timeseries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Daily totals over time
         * @description Per UTC day and protocol (or chain, `groupBy=chain`), from the stored history: the sum of the markets' supply and borrow in their daily snapshots, utilization of the sums, and the liquidations of the day (count, debt repaid, collateral seized, bad debt; those with an amount of no known USD value counted apart, that amount left out of the sums). Date ascending, then protocol name or chain id. `startDate` is raised to your tier's history window (meta.clamped); `endDate` defaults to now. Page with `cursor`.
         */
        get: operations["analyticsTimeseries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/client/api-keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Your account's API keys
         * @description The active and revoked keys of your account that the calling key manages: itself, and the keys of its tier or a lower one (Free < Pro < Enterprise); a test key manages only test keys. Other keys of the account are not listed. The whole key is never shown again after creation.
         */
        get: operations["listApiKeys"];
        put?: never;
        /**
         * Create an API key
         * @description Creates a key on your account with your key's tier. The response is the only time the whole key is shown. A test key can create only test keys. An account may hold at most `maxKeysPerAccount` active keys of a tier and mode (Free 2, Pro 10, Enterprise 100: 403 `KEY_LIMIT_REACHED`) and create at most `keyCreationsPerDay` keys of a mode in any 24 hours (Free 5, Pro 20, Enterprise 100: 429 `KEY_CREATION_RATE_EXCEEDED` with `Retry-After`).
         *
         *     Send an `Idempotency-Key` to retry safely: the same key, from the same account and mode, with the same body within 24 hours gets the first answer again (the same status and body, the same key included, with `Idempotent-Replayed: true`) and creates nothing; with another body it is 422 `IDEMPOTENCY_KEY_REUSED`, and while the first request is still under way 409 `IDEMPOTENCY_KEY_IN_USE` with `Retry-After`. Only a created key is remembered: after an error, a retry with the same key runs afresh.
         */
        post: operations["createApiKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/client/api-keys/{keyId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Revoke an API key
         * @description The key is refused from its next request. A key may always revoke itself, and otherwise the keys it manages: those of your account of its tier or a lower one (Free < Pro < Enterprise), and for a test key only test keys. Any other key, of your account or not, is 404 `KEY_NOT_FOUND`, as a key that does not exist.
         */
        delete: operations["revokeApiKey"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/client/profile": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Your account and the calling key
         * @description The account the calling key belongs to (name, email, creation time), the key itself (never the whole key) and its tier.
         */
        get: operations["getProfile"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/client/quota": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Quota dashboard
         * @description The calling key's current limits, usage, remaining requests and reset times.
         */
        get: operations["getQuota"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/client/usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Requests per UTC day and endpoint
         * @description Counted requests of the calling key per UTC day and endpoint, from `startDate` (raised to the tier's history window) to today.
         */
        get: operations["getUsage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/client/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Your account's webhooks
         * @description The account's webhooks of the calling key's mode, oldest first. Secrets are never shown again.
         */
        get: operations["listWebhooks"];
        put?: never;
        /**
         * Create a webhook
         * @description Subscribes a URL to risk events: each matching event is POSTed to it as JSON, signed with the webhook's secret in `LRDS-Signature` (`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`), with its id in `LRDS-Event-Id`. A 2xx answer within 10 s delivers it; anything else is retried with exponential backoff for 24 hours. The response is the only time the secret is shown.
         *
         *     Needs the tier's `risk` category (403 `TIER_FORBIDDEN`); an account holds at most `maxWebhooksPerAccount` webhooks per mode (Pro 10, Enterprise 100: 403 `WEBHOOK_LIMIT_REACHED`). The URL must be `https` and resolve to public addresses only (no private, loopback, link-local or reserved address, IPv4 or IPv6); it is checked again before every delivery. A test key subscribes to the events of the sandbox served to test keys.
         */
        post: operations["createWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/client/webhooks/{webhookId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * One webhook
         * @description A webhook of the account (of the calling key's mode). Its secret is never shown again.
         */
        get: operations["getWebhook"];
        put?: never;
        post?: never;
        /**
         * Delete a webhook
         * @description Nothing more is sent to it: deliveries still pending are marked failed. Answers the webhook as it was.
         */
        delete: operations["deleteWebhook"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/client/webhooks/{webhookId}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A webhook's deliveries
         * @description The delivery log, newest event first: per event, its attempts, the last status and error, the next attempt and when it was delivered. Kept as long as the events (7 days by default).
         */
        get: operations["listWebhookDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/client/webhooks/{webhookId}/test": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send a test event
         * @description Stores a `ping` event for this webhook and delivers it at once, signed like every event (and retried like any). Follow it in the webhook's deliveries.
         */
        post: operations["testWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/events/stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Risk events as server-sent events
         * @description A `text/event-stream` of the risk events matching the filters, each sent with `id:` (the event id), `event:` (its type) and `data:` (the event as JSON, as a webhook receives it). A comment line is sent every 15 s on an idle stream. After a disconnect, reconnect with the `Last-Event-ID` header (browsers' EventSource does it): the events that followed that one are replayed from the retained log (7 days by default), then the stream goes on. Without it, the stream starts from now.
         *
         *     Opening a stream counts as one request. A key may hold `maxStreamsPerKey` streams open at once (Pro 2, Enterprise 20: 429 `STREAM_LIMIT_REACHED`). A reader that falls more than 1 MiB behind is disconnected (it resumes with `Last-Event-ID`). Events are not guaranteed to arrive in the order they happened.
         */
        get: operations["streamEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/health": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Service health
         * @description State of the store, the limiter backend and each dataset. No key needed; not counted.
         */
        get: operations["health"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/liquidations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Liquidations
         * @description Liquidations, newest first (time, then chain, tx hash, log index), with the collateral seized, the debt repaid and any bad debt, in token units and USD (null where the token has no USD price). Streamed: the body is written as it is read, whatever `limit` (up to 500,000), so memory stays flat on both sides; send `Accept: application/x-ndjson` for one JSON object per line (the items, then a last line `{"meta": …}`). `startDate` is raised to your tier's history window. Page with `cursor`. A streamed answer carries no ETag (it is not known before the body is written).
         */
        get: operations["listLiquidations"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/markets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List markets
         * @description Markets sorted by total supply (USD), largest first. Page with `offset`; `meta.total` is the number of markets in scope.
         */
        get: operations["listMarkets"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/markets/search": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Search markets
         * @description Keyword search over collateral and loan symbols and names, market label, vault symbol and the pair notation `COLLATERAL/LOAN`. Every term must match (AND); a term matches a word by prefix, or anywhere in it. Ranking: exact symbol, then prefix, then substring; ties by supply, largest first. At most 8 distinct terms.
         */
        get: operations["searchMarkets"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/markets/{marketId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get one market
         * @description One market with its oracle, oracle health, strategy and risk metrics. The id is matched case-insensitively.
         */
        get: operations["getMarket"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/markets/{marketId}/history": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Market history
         * @description A market's state over time, oldest first: supply, borrow, utilization, APYs and prices, one point per UTC day (00:00), or per hour with `interval=hour` (the last 30 days). `startDate` is raised to your tier's history window and, hourly, to 30 days ago (meta.clamped); `endDate` defaults to now. Page with `cursor`.
         */
        get: operations["getMarketHistory"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/oracles": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List oracles
         * @description The markets' price oracles by chain id then address (page with `cursor`): type, provider, each feed's heartbeat, deviation threshold, last update, age and staleness now, and the supply and borrow of the markets that depend on it. `stale=true` keeps the oracles whose stalest feed is past its heartbeat. `meta.total`: oracles matching.
         */
        get: operations["listOracles"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/oracles/{chainId}/{address}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get one oracle
         * @description One oracle: its feeds with their freshness now (a feed is stale once its last update is older than its heartbeat; the oracle's health is its stalest feed's), and the markets that depend on it with their supply at stake.
         */
        get: operations["getOracle"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/oracles/{chainId}/{address}/rounds": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Oracle rounds
         * @description The answers the oracle's feeds published, oldest first (by time, then feed, then round), in the time range: `startDate` is raised to your tier's history window (meta.clamped), `endDate` defaults to now. Page with `cursor`.
         */
        get: operations["getOracleRounds"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/portfolios/{address}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A wallet's portfolio
         * @description A wallet across protocols and chains in scope (for Euler, with the positions of its EVC sub-accounts, the addresses sharing its first 19 bytes): collateral, debt, supplied and net value in USD, the weakest health factor, per protocol and per chain breakdowns, every position with its liquidation price (weakest first), and for each asset backing or owed by a borrow position the price move (all other prices fixed) that makes its first position liquidatable. Positions of an account in a pooled protocol (Aave, Spark per pool, Compound per comet, Euler per controller vault) show the account's health factor. A wallet with no position answers zeros.
         */
        get: operations["getPortfolio"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/positions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A wallet's positions
         * @description Every position of a wallet in scope (borrowing or only lending; for Euler, those of its EVC sub-accounts too, each naming its sub-account), by market uniqueKey (page with `cursor`): the PositionAtRisk shape plus the collateral price now and the `liquidationPrice`, named by `liquidationPriceToken`: the price of the position's collateral token at which its health factor (for pooled protocols the account's) reaches 1, every other price fixed, or of the token named by `asset`. `meta.total`: positions in scope.
         */
        get: operations["listPositions"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/ratings/markets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List market ratings
         * @description Every market's credit rating: a grade (AAA to D), a 0-100 score and five component scores (oracle, LLTV buffer against volatility, liquidity, borrower concentration, liquidations) with why, by score (best first, or `order=asc`), page with `cursor`. Ratings are computed daily at 00:00 UTC, at start-up and when the dataset changes (`meta.asOf`: the data they reflect); see `GET /ratings/methodology`. `meta.total`: ratings matching.
         */
        get: operations["listMarketRatings"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/ratings/markets/{marketId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get one market's rating
         * @description One market's credit rating: grade, score, the five component scores with their weights and explanations, and the figures they were computed from (`metrics`). The id is matched case-insensitively.
         */
        get: operations["getMarketRating"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/ratings/markets/{marketId}/history": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A market's rating history
         * @description The changes of a market's rating, oldest first: a rating is recorded when its grade changes, its score moves by 2 points or more, or the methodology version changes, and when it stops being graded (grade NR, `score` null, with the `reason`: below the size floor, a component without data) and starts again; NR after NR is no change, whatever its reason. Each with the grade and score before. `startDate` is raised to your tier's history window (meta.clamped); `endDate` defaults to now. Page with `cursor`.
         */
        get: operations["getMarketRatingHistory"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/ratings/methodology": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Rating methodology
         * @description How ratings are computed, versioned: the 0-100 scale and the grades, each component of a market and of a vault with its weight, its formula in words and its parameters (thresholds, provider scores, family volatilities), the history window, and when a rating change is recorded.
         */
        get: operations["getRatingMethodology"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/ratings/vaults": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List vault ratings
         * @description Every vault's credit rating: 0.8 x the supply-weighted score of the markets it allocates to plus 0.2 x its diversification, with its grade and the rating of each allocation, by score (best first, or `order=asc`), page with `cursor`. `meta.total`: ratings matching.
         */
        get: operations["listVaultRatings"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/ratings/vaults/{chainId}/{address}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get one vault's rating
         * @description One vault's credit rating: grade, score, its markets and diversification components, and the rating of each allocation.
         */
        get: operations["getVaultRating"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/ratings/vaults/{chainId}/{address}/history": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A vault's rating history
         * @description The changes of a vault's rating, oldest first, recorded as for markets (a grade change, a score move of 2 points or more, a new methodology version, the step into NR (not graded: `score` null, with the `reason`) and back out of it; NR after NR is no change). `startDate` is raised to your tier's history window (meta.clamped); `endDate` defaults to now. Page with `cursor`.
         */
        get: operations["getVaultRatingHistory"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/research/reports": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Research reports
         * @description The daily risk digests, one per UTC day and protocol, newest first: written by a scheduled job once the day is over, from its stored history (utilization spikes, notable liquidations, rating changes; positions near liquidation and stale oracles for the day just ended). Each is narrowed to the chains in your scope; `startDate` is raised to your tier's history window. Page with `cursor`.
         */
        get: operations["listResearchReports"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/research/reports/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * One research report
         * @description One daily digest, as structured JSON and as Markdown (`markdown`), narrowed to the chains in your scope: per chain supply, borrow, utilization and its change, liquidations and bad debt; utilization spikes; notable liquidations; rating changes; and, for the day just ended, the largest positions near liquidation and the stale oracles. A report none of whose chains is in your scope, or of a day before your tier's history window, is not found.
         */
        get: operations["getResearchReport"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/risk/markets/{marketId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A market's risk
         * @description Positions liquidatable now; collateral and debt at risk, collateral liquidators would seize and estimated bad debt under collateral price falls of 5, 10, 20 and 30 % (the loan price fixed; every liquidatable position liquidated in full at the market's liquidation bonus); the market's loan liquidity against the debt those liquidations repay; concentration of the debt (top 10 borrowers' share, Herfindahl index); oracle health.
         */
        get: operations["getMarketRisk"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/risk/positions-at-risk": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Positions at risk
         * @description Borrow positions whose health factor is below the threshold (liquidatable ones, below 1, included), ordered by health factor ascending, then borrowed USD descending. Positions without debt are never at risk. The whole set pages with `cursor`: the first page takes the set and its order as of its `meta.asOf`, and the pages of its `meta.nextCursor` come from that set (no position twice, none skipped, the figures as of that instant) for 10 minutes; after that the cursor is refused (400 INVALID_PARAMETER naming the time it expired). `meta.total` is the size of the set on every page; `limit` (capped by your tier's result cap) bounds each page, not the set.
         */
        get: operations["positionsAtRisk"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/risk/stress": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Stress test
         * @description Moves asset prices and reports, per market and in total, the positions newly liquidatable, the debt at risk, the collateral liquidators would seize and the estimated bad debt, liquidating every liquidatable position in full at its market's liquidation bonus. Correlated assets move with their base unless shocked themselves: ETH staking and restaking tokens (wstETH, weETH, rETH, cbETH, rsETH, ezETH...) with ETH or WETH, BTC wrappers (cbBTC, tBTC, LBTC...) with BTC or WBTC. An isolated market moves by (1 + collateral move) / (1 + loan move) in health factor; a position of an account (Aave, Spark, Compound, Euler) is liquidatable when its account is, every token of the account moved. `meta.total` counts the moved markets with liquidatable positions.
         */
        get: operations["stressTest"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tokens": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List tokens
         * @description Tokens the markets hold as collateral or lend, by chain id then address (an order no data change moves; page with `cursor`), with their USD price and its source, and the supply and borrow of the markets that lend them. `meta.total`: tokens in scope.
         */
        get: operations["listTokens"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tokens/{chainId}/{address}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get one token
         * @description One token: its USD price and the source of it, the feeds on its chain that price it (with their freshness), and every market holding it as collateral or loan with its supply and borrow.
         */
        get: operations["getToken"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/vaults": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List vaults
         * @description Morpho vaults with their curator and Euler vaults with their governor, by chain id then address (page with `cursor`): asset, total assets in USD, APY net of fee, and the allocation by market with its share, supply cap, strategy risk level and oracle health. `meta.total`: vaults matching.
         */
        get: operations["listVaults"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/vaults/{chainId}/{address}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get one vault
         * @description One vault with its allocation by market, as in the list.
         */
        get: operations["getVault"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** Error */
        Error: {
            /**
             * @description Machine-readable error code.
             * @enum {string}
             */
            error: "INVALID_PARAMETER" | "UNAUTHORIZED" | "TIER_FORBIDDEN" | "CHAIN_FORBIDDEN" | "KEY_LIMIT_REACHED" | "WEBHOOK_LIMIT_REACHED" | "NOT_FOUND" | "MARKET_NOT_FOUND" | "TOKEN_NOT_FOUND" | "ORACLE_NOT_FOUND" | "VAULT_NOT_FOUND" | "REPORT_NOT_FOUND" | "KEY_NOT_FOUND" | "WEBHOOK_NOT_FOUND" | "METHOD_NOT_ALLOWED" | "REQUEST_TIMEOUT" | "IDEMPOTENCY_KEY_IN_USE" | "PAYLOAD_TOO_LARGE" | "UNSUPPORTED_MEDIA_TYPE" | "IDEMPOTENCY_KEY_REUSED" | "HEADERS_TOO_LARGE" | "RATE_LIMIT_EXCEEDED" | "DAILY_QUOTA_EXCEEDED" | "MONTHLY_QUOTA_EXCEEDED" | "KEY_CREATION_RATE_EXCEEDED" | "STREAM_LIMIT_REACHED" | "INTERNAL_ERROR" | "SERVICE_UNAVAILABLE";
            /** @description Human-readable explanation. */
            message: string;
            /** @description INVALID_PARAMETER: each offending parameter. */
            details?: {
                parameter: string;
                problem: string;
            }[];
            /** @description RATE_LIMIT_EXCEEDED, KEY_CREATION_RATE_EXCEEDED: seconds to wait, to the ms. */
            retryAfter?: number;
            /** @description Quota errors: the quota. Key limits: the most the tier allows. */
            limit?: number;
            /** @description Quota errors: requests counted, greater than limit. */
            used?: number;
            tier?: string;
            category?: string;
            chainId?: number;
        };
        /**
         * Liquidation
         * @example {
         *       "protocol": "morpho",
         *       "chainId": 1,
         *       "txHash": "0x3a5a447df75a969152a14ae5c3b7d8bcc076f50a0b1f34529229e2850066a355",
         *       "logIndex": 337,
         *       "block": 23780246,
         *       "timestamp": "2026-11-20T14:03:11.000Z",
         *       "marketId": "morpho-1-0xb8fc70e82bc5bb53e773626fcc6a23f7eefa036918d7ef216ecfb1950a94a85e",
         *       "collateral": "wstETH",
         *       "loan": "WETH",
         *       "borrower": "0x9f8c2c68d3e470e05737a1fe487b8997f4344a06",
         *       "liquidator": "0xe5d40dfabe294c0d79ea1e0ecd8060f2236ff521",
         *       "collateralSeized": 12.41,
         *       "collateralSeizedUsd": 50912.33,
         *       "debtRepaid": 14.2,
         *       "debtRepaidUsd": 48262.1,
         *       "badDebt": 0,
         *       "badDebtUsd": 0
         *     }
         */
        Liquidation: {
            /**
             * @description Lending protocol identifier.
             * @enum {string}
             */
            protocol: "morpho" | "aave" | "spark" | "compound" | "euler" | "fluid";
            chainId: number;
            /** @description Lower-case transaction hash. */
            txHash: string;
            logIndex: number;
            block: number;
            /** @description ISO 8601 UTC time of the block. */
            timestamp: string;
            /** @description Market uniqueKey. */
            marketId: string;
            /** @description Collateral symbol; null when the market is not in the current data. */
            collateral: string | null;
            /** @description Loan symbol; null when the market is not in the current data. */
            loan: string | null;
            /** @description Lower-case 0x address. */
            borrower: string;
            /** @description Lower-case 0x address. */
            liquidator: string;
            /** @description Collateral seized, token units. */
            collateralSeized: number;
            /** @description Collateral seized, at the prices of the liquidation's block where they could be read, else its market's, USD (to the cent); null when the collateral has no USD price (never 0: the amount is unknown, not nothing). */
            collateralSeizedUsd: number | null;
            /** @description Debt repaid, token units. */
            debtRepaid: number;
            /** @description Debt repaid, USD (to the cent); null when the loan token has no USD price (never 0: the amount is unknown, not nothing). */
            debtRepaidUsd: number | null;
            /** @description Debt left unbacked by collateral, token units. */
            badDebt: number;
            /** @description Bad debt (0 when there is none, priced or not), USD (to the cent); null when the loan token has no USD price (never 0: the amount is unknown, not nothing). */
            badDebtUsd: number | null;
        };
        /** Market */
        Market: {
            /**
             * @description `<protocol>-<chainId>-<identifier>`, lowercase.
             * @example morpho-1-0xb323495f7e4148be5643a4ea4a8221eef163e4bccfdedc2a6f4696baacbc86cc
             */
            uniqueKey: string;
            /**
             * @description Lending protocol identifier.
             * @enum {string}
             */
            protocol: "morpho" | "aave" | "spark" | "compound" | "euler" | "fluid";
            /** @example 1 */
            chainId: number;
            /**
             * @description Market label.
             * @example wstETH / WETH
             */
            label: string | null;
            /**
             * @description Collateral token symbol.
             * @example wstETH
             */
            collateral: string;
            /**
             * @description Loan token symbol.
             * @example WETH
             */
            loan: string;
            /** @example 0x7f39c581f595b53c5cb19bd0b3f8da6c935e2ca0 */
            collateralAddress: string;
            loanAddress: string;
            /** @description USD; null when no source states one (never 0: a market without a USD price is still served, with what is known). */
            collateralPrice: number | null;
            /** @description USD; null when no source states one (then supply, borrow and available are null too). */
            loanPrice: number | null;
            /** @description Total supplied, USD; null without a loan price (supplyAssets holds the amount). */
            supply: number | null;
            /** @description Total borrowed, USD; null without a loan price. */
            borrow: number | null;
            /** @description supply - borrow, USD; null without a loan price. */
            available: number | null;
            /** @description Total supplied in loan-token units: as the source read it, else supply / loanPrice; null when neither is known. */
            supplyAssets: number | null;
            /** @description Total borrowed in loan-token units (as supplyAssets). */
            borrowAssets: number | null;
            /** @description borrow / supply, 0 to 1 (in loan-token units when there is no USD price). */
            utilization: number;
            /** @description Decimal APY (0.042 = 4.2 %). */
            supplyApy: number;
            /** @description Decimal APY. */
            borrowApy: number;
            /** @description Additional rewards APY, decimal. */
            supplyRewardsApy: number;
            /** @description Additional rewards APY, decimal. */
            borrowRewardsApy: number;
            rewardTokens: string[];
            /** @description Liquidation loan-to-value, 0 to 1. */
            lltv: number;
            /** @description 1 / (1 - lltv). */
            maxLeverage: number;
            strategyType: string;
            strategyInfo: {
                /** @description Strategy type, e.g. `eth-lst-loop`. */
                type: string;
                label: string;
                description: string;
                /** @enum {string} */
                riskLevel: "low" | "medium" | "high";
                /** @description Hex color used for this strategy in dashboards. */
                color: string;
                /** @description Icon name. */
                icon: string;
            };
            /** @description Vault token symbol (euler markets only). */
            vaultSymbol: string | null;
            /** @description Vault contract address (Euler and Fluid markets; null on the others). */
            vaultAddress: string | null;
            /** @description Governor or curator name (euler markets only). */
            governor: string | null;
            /** @description Price oracle of the market; null when unknown. */
            oracle: {
                address: string;
                /** @enum {string} */
                type: "ChainlinkOracle" | "ChainlinkOracleV2" | "RedstoneOracle" | "PythOracle" | "ChronicleOracle" | "Api3Oracle" | "PendlePtOracle" | "ExchangeRateOracle" | "Custom";
                /** @enum {string} */
                provider: "Chainlink" | "Redstone" | "Pyth" | "Chronicle" | "API3" | "Pendle" | "Uniswap" | "Unknown";
                feeds: {
                    address: string;
                    description: string;
                    /** @example ETH/USD */
                    pair: string;
                }[];
                /** @description True when the price is composed from several feeds. */
                isComposite: boolean;
                warnings: string[] | null;
            } | null;
            /** @description Oracle freshness (the stalest feed of a composite oracle); null without oracle data. */
            oracleHealth: {
                /** @description Unix seconds of the last update (of the stalest feed). */
                lastUpdateTimestamp: number;
                /** @description now - lastUpdateTimestamp, seconds. */
                secondsSinceUpdate: number;
                /** @description Maximum interval the feed promises between updates. */
                expectedHeartbeatSeconds: number;
                /** @description stalenessRatio > 1. */
                isStale: boolean;
                /** @description secondsSinceUpdate / expectedHeartbeatSeconds. */
                stalenessRatio: number;
            } | null;
        };
        /** MarketBrief */
        MarketBrief: {
            marketId: string;
            /**
             * @description Lending protocol identifier.
             * @enum {string}
             */
            protocol: "morpho" | "aave" | "spark" | "compound" | "euler" | "fluid";
            chainId: number;
            /** @description One sentence: the market, its size and use, its most severe flag. */
            summary: string;
            keyFigures: {
                /** @description Supplied, USD; null without a USD price of the loan token (flag NO_USD_PRICE). */
                supplyUsd: number | null;
                /** @description Borrowed, USD; null without a USD price of the loan token. */
                borrowUsd: number | null;
                utilization: number;
                supplyApy: number;
                borrowApy: number;
                /** @description Available to withdraw or borrow, USD; null without a USD price of the loan token. */
                availableLiquidityUsd: number | null;
                lltv: number;
                borrowPositions: number;
                liquidatablePositions: number;
                /** @description Debt of the liquidatable positions, USD (to the cent). */
                debtLiquidatableUsd: number;
                /** @description Seconds since the oracle updated over its heartbeat; null without an oracle. */
                oracleStalenessRatio: number | null;
                /** @description The 10 largest borrowers' share of the debt. */
                top10BorrowerShare: number;
            };
            /** @description Critical first. */
            flags: {
                /** @description What is flagged. A wallet's positions: LIQUIDATABLE (health factor below 1), NEAR_LIQUIDATION (below 1.1), BELOW_TARGET (below the target health factor asked), STALE_ORACLE (its market oracle is past its heartbeat). A market: LIQUIDATABLE_POSITIONS, HIGH_UTILIZATION (95 % or more), STALE_ORACLE, NO_ORACLE, CONCENTRATED_BORROWERS (Herfindahl index of borrowers 0.25 or more), BAD_DEBT_UNDER_STRESS (a 20 % collateral fall leaves bad debt), THIN_LIQUIDITY (a 10 % fall's liquidations would repay more than the market holds), NO_USD_PRICE (a token without a USD price). `reason` says why, with the figures. */
                code: string;
                /** @enum {string} */
                severity: "critical" | "warning" | "info";
                /** @description Why, in plain language, with the figures it was decided on. */
                reason: string;
            }[];
            /** @description Collateral falls of 10 and 20 % (GET /risk/markets/{marketId} has the method). */
            stress: {
                collateralPriceChange: number;
                newlyLiquidatable: number;
                /** @description Debt of the positions liquidatable after the fall, USD (to the cent). */
                debtAtRiskUsd: number;
                /** @description Estimated bad debt, USD (to the cent). */
                badDebtUsd: number;
            }[];
        };
        /**
         * MarketHistoryPoint
         * @example {
         *       "at": "2026-11-20T00:00:00.000Z",
         *       "supply": 152340112.54,
         *       "borrow": 131022000.1,
         *       "utilization": 0.86006244,
         *       "supplyApy": 0.0241,
         *       "borrowApy": 0.0312,
         *       "collateralPrice": 4102.3,
         *       "loanPrice": 3398.7,
         *       "oraclePrice": 1.2070204
         *     }
         */
        MarketHistoryPoint: {
            /** @description ISO 8601 UTC: the hour, or the day (00:00), the point is of. */
            at: string;
            /** @description Total supplied, USD (to the cent). */
            supply: number;
            /** @description Total borrowed, USD (to the cent). */
            borrow: number;
            /** @description borrow / supply, 0 to 1. */
            utilization: number;
            /** @description Decimal APY. */
            supplyApy: number;
            /** @description Decimal APY. */
            borrowApy: number;
            /** @description Collateral USD price. */
            collateralPrice: number | null;
            /** @description Loan token USD price. */
            loanPrice: number | null;
            /** @description The market oracle's price of the collateral in loan units. */
            oraclePrice: number | null;
        };
        /**
         * MarketRating
         * @example {
         *       "marketId": "morpho-1-0xb8fc70e82bc5bb53e773626fcc6a23f7eefa036918d7ef216ecfb1950a94a85e",
         *       "protocol": "morpho",
         *       "chainId": 1,
         *       "collateral": "wstETH",
         *       "loan": "WETH",
         *       "grade": "AA",
         *       "score": 85.7,
         *       "reason": null,
         *       "methodologyVersion": "2.0.0",
         *       "ratedAt": "2026-11-22T00:00:00.000Z",
         *       "components": {
         *         "oracle": {
         *           "score": 85,
         *           "weight": 0.2,
         *           "explanation": "Chainlink ChainlinkOracle (2 feeds, composite), no warning; stalest feed at 0.42 of its heartbeat."
         *         },
         *         "lltvBuffer": {
         *           "score": 100,
         *           "weight": 0.2,
         *           "explanation": "LLTV 94.5 %: buffer 5.5 % against a 3-sigma 1-day move of 0.94 % (volatility 6.0 %/yr, no stored price history: eth-lst/eth family default); coverage 5.84x."
         *         },
         *         "liquidity": {
         *           "score": 80,
         *           "weight": 0.15,
         *           "explanation": "Utilization 90.0 %, $10,000,000 available to withdraw."
         *         },
         *         "concentration": {
         *           "score": 65.45,
         *           "weight": 0.1,
         *           "explanation": "40 borrowers: the largest 10 owe 62.0 % of the debt, Herfindahl index 0.071."
         *         },
         *         "liquidations": {
         *           "score": 99.84,
         *           "weight": 0.1,
         *           "explanation": "2 liquidations in the last 90 days repaid $120,000 (0.13 % of borrow); bad debt $0 (0.00 % of borrow)."
         *         },
         *         "size": {
         *           "score": 75,
         *           "weight": 0.1,
         *           "explanation": "$100,000,000 supplied (the floor of $100,000 scores 0, $1,000,000,000 scores 100)."
         *         },
         *         "usage": {
         *           "score": 53.4,
         *           "weight": 0.05,
         *           "explanation": "40 borrowers with debt (1,000 score 100)."
         *         },
         *         "history": {
         *           "score": 100,
         *           "weight": 0.1,
         *           "explanation": "90 days of stored prices of both tokens in the last 90."
         *         }
         *       },
         *       "metrics": {
         *         "oracleStalenessRatio": 0.42,
         *         "lltv": 0.945,
         *         "volatility": 0.06,
         *         "volatilitySource": "family",
         *         "volatilityReturns": 0,
         *         "stressMove": 0.00942163,
         *         "bufferCoverage": 5.8376307,
         *         "utilization": 0.9,
         *         "supplyUsd": 100000000,
         *         "availableUsd": 10000000,
         *         "borrowers": 40,
         *         "historyDays": 90,
         *         "top10Share": 0.62,
         *         "herfindahl": 0.071,
         *         "liquidations": 2,
         *         "liquidatedUsd": 120000,
         *         "badDebtUsd": 0
         *       }
         *     }
         */
        MarketRating: {
            /** @description Market uniqueKey. */
            marketId: string;
            /** @enum {string} */
            protocol: "morpho" | "aave" | "spark" | "compound" | "euler" | "fluid";
            /** @example 1 */
            chainId: number;
            /** @description Collateral token symbol. */
            collateral: string;
            /** @description Loan token symbol. */
            loan: string;
            /**
             * @description Grade of the score: AAA (90-100), AA (80), A (70), BBB (60), BB (50), B (40), CCC (30), CC (20), C (10), D (below 10); NR: not graded (below the size floor, or a component without the data it needs; `reason` says which).
             * @enum {string}
             */
            grade: "AAA" | "AA" | "A" | "BBB" | "BB" | "B" | "CCC" | "CC" | "C" | "D" | "NR";
            /** @description Overall score, 0 to 100: the weighted sum of the component scores (2 decimals); null when not graded (NR). */
            score: number | null;
            /** @description Why it is not graded (grade NR), with the figures; null when graded. */
            reason: string | null;
            /**
             * @description Version of the methodology (GET /ratings/methodology).
             * @example 1.0.0
             */
            methodologyVersion: string;
            /** @description ISO 8601 UTC instant the rating was computed at (ratings are computed daily at 00:00 UTC). */
            ratedAt: string;
            /** @description The eight component scores, their weights and why. */
            components: {
                oracle: {
                    /** @description The component score, 0 to 100 (2 decimals). */
                    score: number;
                    /** @description The component's weight in the overall score. */
                    weight: number;
                    /** @description How the score was reached, in one line. */
                    explanation: string;
                };
                lltvBuffer: {
                    /** @description The component score, 0 to 100 (2 decimals). */
                    score: number;
                    /** @description The component's weight in the overall score. */
                    weight: number;
                    /** @description How the score was reached, in one line. */
                    explanation: string;
                };
                liquidity: {
                    /** @description The component score, 0 to 100 (2 decimals). */
                    score: number;
                    /** @description The component's weight in the overall score. */
                    weight: number;
                    /** @description How the score was reached, in one line. */
                    explanation: string;
                };
                concentration: {
                    /** @description The component score, 0 to 100 (2 decimals). */
                    score: number;
                    /** @description The component's weight in the overall score. */
                    weight: number;
                    /** @description How the score was reached, in one line. */
                    explanation: string;
                };
                liquidations: {
                    /** @description The component score, 0 to 100 (2 decimals). */
                    score: number;
                    /** @description The component's weight in the overall score. */
                    weight: number;
                    /** @description How the score was reached, in one line. */
                    explanation: string;
                };
                size: {
                    /** @description The component score, 0 to 100 (2 decimals). */
                    score: number;
                    /** @description The component's weight in the overall score. */
                    weight: number;
                    /** @description How the score was reached, in one line. */
                    explanation: string;
                };
                usage: {
                    /** @description The component score, 0 to 100 (2 decimals). */
                    score: number;
                    /** @description The component's weight in the overall score. */
                    weight: number;
                    /** @description How the score was reached, in one line. */
                    explanation: string;
                };
                history: {
                    /** @description The component score, 0 to 100 (2 decimals). */
                    score: number;
                    /** @description The component's weight in the overall score. */
                    weight: number;
                    /** @description How the score was reached, in one line. */
                    explanation: string;
                };
            };
            /** @description The figures the components were computed from. */
            metrics: {
                /** @description The stalest feed's secondsSinceUpdate / heartbeat when rated; null without feed data. */
                oracleStalenessRatio: number | null;
                /** @description Liquidation loan-to-value, 0 to 1. */
                lltv: number;
                /** @description Annualized volatility of the collateral/loan price ratio. */
                volatility: number;
                /**
                 * @description `history`: measured from stored daily prices; `family`: the asset families' default.
                 * @enum {string}
                 */
                volatilitySource: "history" | "family";
                /** @description Daily returns the volatility was measured over (0: family default). */
                volatilityReturns: number;
                /** @description The 3-sigma one-day move of the price ratio the buffer is held against. */
                stressMove: number;
                /** @description (1 - lltv) / stressMove; null when the move is 0. */
                bufferCoverage: number | null;
                /** @description borrow / supply when rated, 0 to 1. */
                utilization: number;
                /** @description Supply when rated, USD; null when the loan token has no USD price. */
                supplyUsd: number | null;
                /** @description supply - borrow when rated, USD; null when the loan token has no USD price. */
                availableUsd: number | null;
                /** @description Borrowers with debt known. */
                borrowers: number;
                /** @description UTC days of the last 90 with a stored price of both tokens; null without stored history. */
                historyDays: number | null;
                /** @description Share of the debt owed by the 10 largest borrowers, 0 to 1. */
                top10Share: number;
                /** @description Herfindahl index of the borrowers' debt, 0 to 1. */
                herfindahl: number;
                /** @description Liquidations in the last 90 days; null without stored history. */
                liquidations: number | null;
                /** @description Debt they repaid, USD; null without stored history, or when one of them has no known USD value (its market had no USD price). */
                liquidatedUsd: number | null;
                /** @description Bad debt they left, USD; null as liquidatedUsd is. */
                badDebtUsd: number | null;
            };
        };
        /** MarketRisk */
        MarketRisk: {
            marketId: string;
            /**
             * @description Lending protocol identifier.
             * @enum {string}
             */
            protocol: "morpho" | "aave" | "spark" | "compound" | "euler" | "fluid";
            chainId: number;
            collateralAsset: {
                symbol: string;
                /** @description USD; null when unknown. */
                priceUsd: number | null;
            };
            loanAsset: {
                symbol: string;
                /** @description USD; null when unknown. */
                priceUsd: number | null;
            };
            lltv: number;
            /** @description Paid to liquidators over the debt they repay (0.05 = 5 %): Morpho's min(1.15, 1 / (0.3 x lltv + 0.7)) - 1, 5 % for the pooled protocols. */
            liquidationBonus: number;
            /** @description Supplied, USD; null without a loan price. */
            supplyUsd: number | null;
            /** @description Borrowed, USD; null without a loan price. */
            borrowUsd: number | null;
            /** @description Loan assets available (supply - borrow, at least 0), USD; null without a loan price. */
            availableLiquidityUsd: number | null;
            utilization: number;
            /** @description Positions with debt. */
            borrowPositions: number;
            /** @description Collateral of the positions with debt, USD (to the cent). */
            collateralUsd: number;
            /** @description Debt of the positions, USD (to the cent). */
            debtUsd: number;
            /** @description Positions liquidatable at current prices, and what liquidating them would do. */
            liquidatableNow: {
                /** @description Positions liquidatable after the move (those liquidatable before included). */
                liquidatablePositions: number;
                /** @description Positions the move makes liquidatable. */
                newlyLiquidatable: number;
                /** @description Debt of the positions liquidatable after the move, valued after it, USD (to the cent). */
                debtAtRiskUsd: number;
                /** @description Collateral liquidators would seize, liquidating them in full at the liquidation bonus, USD (to the cent). */
                collateralSeizedUsd: number;
                /** @description Debt liquidators would repay, USD (to the cent). */
                debtRepaidUsd: number;
                /** @description Debt their collateral would not cover (debt - collateral / (1 + bonus), where positive), USD (to the cent). */
                badDebtUsd: number;
            };
            /** @description Collateral price falls of 5, 10, 20 and 30 %. */
            scenarios: {
                /** @description The collateral USD price move (-0.1 = a 10 % fall), the loan price fixed. */
                collateralPriceChange: number;
                /** @description Positions liquidatable after the move (those liquidatable before included). */
                liquidatablePositions: number;
                /** @description Positions the move makes liquidatable. */
                newlyLiquidatable: number;
                /** @description Debt of the positions liquidatable after the move, valued after it, USD (to the cent). */
                debtAtRiskUsd: number;
                /** @description Collateral liquidators would seize, liquidating them in full at the liquidation bonus, USD (to the cent). */
                collateralSeizedUsd: number;
                /** @description Debt liquidators would repay, USD (to the cent). */
                debtRepaidUsd: number;
                /** @description Debt their collateral would not cover (debt - collateral / (1 + bonus), where positive), USD (to the cent). */
                badDebtUsd: number;
                /** @description availableLiquidityUsd / debtRepaidUsd: above 1, the market holds the loan assets the liquidations would repay; null when none would. */
                liquidityCoverage: number | null;
            }[];
            concentration: {
                /** @description Borrowers with debt. */
                borrowers: number;
                /** @description The 10 largest borrowers' share of the debt, 0 to 1. */
                top10Share: number;
                /** @description Herfindahl-Hirschman index of the debt: the sum of each borrower's squared share (1 / n for n equal borrowers, 1 for one). */
                herfindahl: number;
            };
            /** @description Oracle freshness (the stalest feed of a composite oracle); null without oracle data. */
            oracleHealth: {
                /** @description Unix seconds of the last update (of the stalest feed). */
                lastUpdateTimestamp: number;
                /** @description now - lastUpdateTimestamp, seconds. */
                secondsSinceUpdate: number;
                /** @description Maximum interval the feed promises between updates. */
                expectedHeartbeatSeconds: number;
                /** @description stalenessRatio > 1. */
                isStale: boolean;
                /** @description secondsSinceUpdate / expectedHeartbeatSeconds. */
                stalenessRatio: number;
            } | null;
        };
        /** Meta */
        Meta: {
            /** @description Server time from receipt to serialization, ms. */
            latencyMs: number;
            /**
             * @description `live` (<= 60 s old), `cached` (<= 15 min) or `snapshot` (older, sandbox data, or live data no source of which has been read yet: the answer is then empty and has no `asOf`).
             * @enum {string}
             */
            freshness: "live" | "cached" | "snapshot";
            /**
             * @description Protocols of the returned items, sorted, comma-joined.
             * @example aave,morpho
             */
            source: string;
            /** @description Present when a tier clamp changed the request. */
            clamped?: {
                limit?: {
                    requested: unknown;
                    applied: unknown;
                };
                chainIds?: {
                    requested: unknown;
                    applied: unknown;
                };
                startDate?: {
                    requested: unknown;
                    applied: unknown;
                };
            };
            /** @description Items in scope before limit and offset (lists only). */
            total?: number;
            /** @description Lists paged by cursor: pass it as `cursor` to get the next page (same parameters otherwise). Absent on the last page. */
            nextCursor?: string;
            /**
             * @description ISO 8601 UTC time of the last successful refresh of the stalest source behind the answer (data routes; for the living sandbox, the instant of its last simulation tick; absent while no source has been read yet).
             * @example 2026-11-24T12:00:00.000Z
             */
            asOf?: string;
            /**
             * @description Chain data: the block each chain's data reflects, by chain id (the lowest last block of the sources reporting that chain). Absent for the sandbox.
             * @example {
             *       "1": 21000000,
             *       "8453": 23000000
             *     }
             */
            blocks?: {
                [key: string]: number;
            };
            /**
             * @description Chains still syncing, by chain id: served are the accounts named by logs through `throughBlock`, read at `toBlock`; later ones are missing. Absent once synced.
             * @example {
             *       "1": {
             *         "throughBlock": 19500000,
             *         "toBlock": 23900000
             *       }
             *     }
             */
            syncing?: {
                [key: string]: {
                    throughBlock: number;
                    toBlock: number;
                };
            };
        };
        /** Oracle */
        Oracle: {
            /** @example 1 */
            chainId: number;
            /** @description Lower-case 0x address. */
            address: string;
            /** @enum {string} */
            type: "ChainlinkOracle" | "ChainlinkOracleV2" | "RedstoneOracle" | "PythOracle" | "ChronicleOracle" | "Api3Oracle" | "PendlePtOracle" | "ExchangeRateOracle" | "Custom";
            /** @enum {string} */
            provider: "Chainlink" | "Redstone" | "Pyth" | "Chronicle" | "API3" | "Pendle" | "Uniswap" | "Unknown";
            /** @description True when the price is composed from several feeds. */
            isComposite: boolean;
            warnings: string[] | null;
            /** @description Oracle freshness (the stalest feed of a composite oracle); null without oracle data. */
            health: {
                /** @description Unix seconds of the last update (of the stalest feed). */
                lastUpdateTimestamp: number;
                /** @description now - lastUpdateTimestamp, seconds. */
                secondsSinceUpdate: number;
                /** @description Maximum interval the feed promises between updates. */
                expectedHeartbeatSeconds: number;
                /** @description stalenessRatio > 1. */
                isStale: boolean;
                /** @description secondsSinceUpdate / expectedHeartbeatSeconds. */
                stalenessRatio: number;
            } | null;
            feeds: {
                /** @description Lower-case 0x address. */
                address: string;
                description: string;
                /** @example ETH/USD */
                pair: string;
                /** @description Maximum interval the feed promises between updates. */
                heartbeatSeconds: number;
                /**
                 * @description Price move that makes the feed update before its heartbeat, as a fraction (0.005 = 0.5 %); null when unknown.
                 * @example 0.005
                 */
                deviationThreshold: number | null;
                /** @description Unix seconds of its last update. */
                lastUpdateTimestamp: number;
                /** @description now - lastUpdateTimestamp. */
                secondsSinceUpdate: number;
                /** @description stalenessRatio > 1. */
                isStale: boolean;
                /** @description secondsSinceUpdate / heartbeatSeconds. */
                stalenessRatio: number;
            }[];
            /** @description Markets priced by the oracle. */
            marketCount: number;
            /** @description Supply of the markets it prices, USD (to the cent); null when one of them has no USD price (never 0: the amount is unknown, not nothing). */
            supplyAtStakeUsd: number | null;
            /** @description Borrow of the markets it prices, USD (to the cent); null when one of them has no USD price (never 0: the amount is unknown, not nothing). */
            borrowAtStakeUsd: number | null;
        };
        /** OracleDetail */
        OracleDetail: {
            /** @example 1 */
            chainId: number;
            /** @description Lower-case 0x address. */
            address: string;
            /** @enum {string} */
            type: "ChainlinkOracle" | "ChainlinkOracleV2" | "RedstoneOracle" | "PythOracle" | "ChronicleOracle" | "Api3Oracle" | "PendlePtOracle" | "ExchangeRateOracle" | "Custom";
            /** @enum {string} */
            provider: "Chainlink" | "Redstone" | "Pyth" | "Chronicle" | "API3" | "Pendle" | "Uniswap" | "Unknown";
            /** @description True when the price is composed from several feeds. */
            isComposite: boolean;
            warnings: string[] | null;
            /** @description Oracle freshness (the stalest feed of a composite oracle); null without oracle data. */
            health: {
                /** @description Unix seconds of the last update (of the stalest feed). */
                lastUpdateTimestamp: number;
                /** @description now - lastUpdateTimestamp, seconds. */
                secondsSinceUpdate: number;
                /** @description Maximum interval the feed promises between updates. */
                expectedHeartbeatSeconds: number;
                /** @description stalenessRatio > 1. */
                isStale: boolean;
                /** @description secondsSinceUpdate / expectedHeartbeatSeconds. */
                stalenessRatio: number;
            } | null;
            feeds: {
                /** @description Lower-case 0x address. */
                address: string;
                description: string;
                /** @example ETH/USD */
                pair: string;
                /** @description Maximum interval the feed promises between updates. */
                heartbeatSeconds: number;
                /**
                 * @description Price move that makes the feed update before its heartbeat, as a fraction (0.005 = 0.5 %); null when unknown.
                 * @example 0.005
                 */
                deviationThreshold: number | null;
                /** @description Unix seconds of its last update. */
                lastUpdateTimestamp: number;
                /** @description now - lastUpdateTimestamp. */
                secondsSinceUpdate: number;
                /** @description stalenessRatio > 1. */
                isStale: boolean;
                /** @description secondsSinceUpdate / heartbeatSeconds. */
                stalenessRatio: number;
            }[];
            /** @description Markets priced by the oracle. */
            marketCount: number;
            /** @description Supply of the markets it prices, USD (to the cent); null when one of them has no USD price (never 0: the amount is unknown, not nothing). */
            supplyAtStakeUsd: number | null;
            /** @description Borrow of the markets it prices, USD (to the cent); null when one of them has no USD price (never 0: the amount is unknown, not nothing). */
            borrowAtStakeUsd: number | null;
            /** @description The markets it prices, largest supply first (those without one last). */
            markets: {
                uniqueKey: string;
                /**
                 * @description Lending protocol identifier.
                 * @enum {string}
                 */
                protocol: "morpho" | "aave" | "spark" | "compound" | "euler" | "fluid";
                collateral: string;
                loan: string;
                /** @description Market supply, USD (to the cent); null when the market has no USD price (never 0: the amount is unknown, not nothing). */
                supply: number | null;
                /** @description Market borrow, USD (to the cent); null when the market has no USD price (never 0: the amount is unknown, not nothing). */
                borrow: number | null;
            }[];
        };
        /**
         * OracleRound
         * @example {
         *       "feed": "0x5f4ec3df9cbd43714fe2740f5e3616155c5b8419",
         *       "roundId": "110680464442257320247",
         *       "answer": 3412.5,
         *       "updatedAt": 1795576800
         *     }
         */
        OracleRound: {
            /** @description Lower-case 0x address. */
            feed: string;
            /** @description uint80 round id, decimal. */
            roundId: string;
            /** @description The price the round published, in the feed's quote (8 significant digits). */
            answer: number;
            /** @description Unix seconds. */
            updatedAt: number;
        };
        /** Overview */
        Overview: {
            /** @description The health factor below which a position counts as at risk (1.1). */
            atRiskHealthFactor: number;
            totals: {
                markets: number;
                /** @description Markets counted whose loan token has no USD price: their supply and borrow are not in supplyUsd and borrowUsd. */
                unpricedMarkets: number;
                /** @description Supplied, USD (to the cent). */
                supplyUsd: number;
                /** @description Borrowed, USD (to the cent). */
                borrowUsd: number;
                /** @description borrowUsd / supplyUsd (0 when nothing is supplied). */
                utilization: number;
                /** @description Positions held, debt-free ones included. */
                positions: number;
                /** @description Positions with debt. */
                borrowPositions: number;
                /** @description Positions with a health factor below atRiskHealthFactor (liquidatable ones included). */
                positionsAtRisk: number;
                /** @description Positions with a health factor below 1. */
                liquidatablePositions: number;
                /** @description Debt of the positions at risk, USD (to the cent). */
                debtAtRiskUsd: number;
            };
            /** @description Largest supply first. */
            byProtocol: {
                /**
                 * @description Lending protocol identifier.
                 * @enum {string}
                 */
                protocol: "morpho" | "aave" | "spark" | "compound" | "euler" | "fluid";
                markets: number;
                /** @description Markets counted whose loan token has no USD price: their supply and borrow are not in supplyUsd and borrowUsd. */
                unpricedMarkets: number;
                /** @description Supplied, USD (to the cent). */
                supplyUsd: number;
                /** @description Borrowed, USD (to the cent). */
                borrowUsd: number;
                /** @description borrowUsd / supplyUsd (0 when nothing is supplied). */
                utilization: number;
                /** @description Positions held, debt-free ones included. */
                positions: number;
                /** @description Positions with debt. */
                borrowPositions: number;
                /** @description Positions with a health factor below atRiskHealthFactor (liquidatable ones included). */
                positionsAtRisk: number;
                /** @description Positions with a health factor below 1. */
                liquidatablePositions: number;
                /** @description Debt of the positions at risk, USD (to the cent). */
                debtAtRiskUsd: number;
            }[];
            /** @description Largest supply first. */
            byChain: {
                chainId: number;
                markets: number;
                /** @description Markets counted whose loan token has no USD price: their supply and borrow are not in supplyUsd and borrowUsd. */
                unpricedMarkets: number;
                /** @description Supplied, USD (to the cent). */
                supplyUsd: number;
                /** @description Borrowed, USD (to the cent). */
                borrowUsd: number;
                /** @description borrowUsd / supplyUsd (0 when nothing is supplied). */
                utilization: number;
                /** @description Positions held, debt-free ones included. */
                positions: number;
                /** @description Positions with debt. */
                borrowPositions: number;
                /** @description Positions with a health factor below atRiskHealthFactor (liquidatable ones included). */
                positionsAtRisk: number;
                /** @description Positions with a health factor below 1. */
                liquidatablePositions: number;
                /** @description Debt of the positions at risk, USD (to the cent). */
                debtAtRiskUsd: number;
            }[];
        };
        /** Portfolio */
        Portfolio: {
            /** @description Lower-case 0x address. */
            address: string;
            totals: {
                /** @description Collateral, USD (to the cent). */
                collateralUsd: number;
                /** @description Debt, USD (to the cent). */
                debtUsd: number;
                /** @description Supplied (lent), USD (to the cent). */
                supplyUsd: number;
                /** @description collateral + supplied - debt, USD (to the cent). */
                netUsd: number;
                positions: number;
                /** @description Lowest health factor of the positions with debt; null when none has debt. */
                weakestHealthFactor: number | null;
            };
            /** @description uniqueKey of the market of the weakest position. */
            weakestPosition: string | null;
            byProtocol: {
                /**
                 * @description Lending protocol identifier.
                 * @enum {string}
                 */
                protocol: "morpho" | "aave" | "spark" | "compound" | "euler" | "fluid";
                /** @description Collateral, USD (to the cent). */
                collateralUsd: number;
                /** @description Debt, USD (to the cent). */
                debtUsd: number;
                /** @description Supplied (lent), USD (to the cent). */
                supplyUsd: number;
                /** @description collateral + supplied - debt, USD (to the cent). */
                netUsd: number;
                positions: number;
                /** @description Lowest health factor of the positions with debt; null when none has debt. */
                weakestHealthFactor: number | null;
            }[];
            byChain: {
                chainId: number;
                /** @description Collateral, USD (to the cent). */
                collateralUsd: number;
                /** @description Debt, USD (to the cent). */
                debtUsd: number;
                /** @description Supplied (lent), USD (to the cent). */
                supplyUsd: number;
                /** @description collateral + supplied - debt, USD (to the cent). */
                netUsd: number;
                positions: number;
                /** @description Lowest health factor of the positions with debt; null when none has debt. */
                weakestHealthFactor: number | null;
            }[];
            /** @description Weakest (lowest health factor) first; debt-free last. */
            positions: {
                /**
                 * @description Lending protocol identifier.
                 * @enum {string}
                 */
                protocol: "morpho" | "aave" | "spark" | "compound" | "euler" | "fluid";
                chainId: number;
                user: {
                    /** @description Lower-case 0x address. */
                    address: string;
                };
                /** @description collateralUsd x lltv / borrowAssetsUsd; below 1 = liquidatable; for pooled protocols the account's (sum(collateralUsd x lltv) / sum(borrowAssetsUsd) of the wallet's positions in the pool, comet or Euler controller vault), shown on each of its positions, debt-free ones too; null when the position (for pooled protocols, its account) has no debt. */
                healthFactor: number | null;
                state: {
                    collateralUsd: number;
                    borrowAssetsUsd: number;
                    supplyAssetsUsd: number;
                };
                market: {
                    uniqueKey: string;
                    collateralAsset: {
                        symbol: string;
                    };
                    loanAsset: {
                        symbol: string;
                    };
                    lltv: number;
                };
                /** @description collateralUsd / (collateralUsd - borrowAssetsUsd), of the account's totals for pooled protocols; null when collateral does not exceed debt. */
                leverage: number | null;
                /** @description 1 - 1 / healthFactor; null without debt. */
                distanceToLiq: number | null;
                /** @description The collateral USD price now. */
                collateralPrice: number;
                /** @description The USD price of the token named by `liquidationPriceToken` at which the health factor (for pooled protocols the account's) reaches 1, every other price fixed: by default the position's collateral token (collateralPrice / healthFactor for an isolated position); with `asset`, that asset's price (its debt: the price whose rise liquidates); null without debt, when the position does not hold the asset, or when no price of it liquidates the account (its other collateral covers the debt). */
                liquidationPrice: number | null;
                /** @description The token whose USD price `liquidationPrice` is; null when `liquidationPrice` is null. */
                liquidationPriceToken: {
                    /** @description Lower-case 0x address. */
                    address: string;
                    symbol: string;
                } | null;
            }[];
            /** @description Per asset backing or owed by a borrow position, closest to liquidation first. */
            liquidationMoves: {
                chainId: number;
                /** @description Lower-case 0x address. */
                token: string;
                symbol: string;
                /** @enum {string} */
                side: "collateral" | "debt";
                /** @description Value held of it on that side, USD (to the cent). */
                exposureUsd: number;
                priceUsd: number;
                /** @description Relative price move, all other prices fixed, that brings the first position (for pooled protocols, its account, every position of the account in the token moving) to health factor 1: a fall for collateral (<= 0), a rise for debt (>= 0); 0 when one is liquidatable already. */
                move: number;
                /** @description priceUsd x (1 + move). */
                priceAtLiquidation: number;
                /** @description The market of the position it liquidates first. */
                marketId: string;
            }[];
        };
        /** Position */
        Position: {
            /**
             * @description Lending protocol identifier.
             * @enum {string}
             */
            protocol: "morpho" | "aave" | "spark" | "compound" | "euler" | "fluid";
            chainId: number;
            user: {
                /** @description Lower-case 0x address. */
                address: string;
            };
            /** @description collateralUsd x lltv / borrowAssetsUsd; below 1 = liquidatable; for pooled protocols the account's (sum(collateralUsd x lltv) / sum(borrowAssetsUsd) of the wallet's positions in the pool, comet or Euler controller vault), shown on each of its positions, debt-free ones too; null when the position (for pooled protocols, its account) has no debt. */
            healthFactor: number | null;
            state: {
                collateralUsd: number;
                borrowAssetsUsd: number;
                supplyAssetsUsd: number;
            };
            market: {
                uniqueKey: string;
                collateralAsset: {
                    symbol: string;
                };
                loanAsset: {
                    symbol: string;
                };
                lltv: number;
            };
            /** @description collateralUsd / (collateralUsd - borrowAssetsUsd), of the account's totals for pooled protocols; null when collateral does not exceed debt. */
            leverage: number | null;
            /** @description 1 - 1 / healthFactor; null without debt. */
            distanceToLiq: number | null;
            /** @description The collateral USD price now. */
            collateralPrice: number;
            /** @description The USD price of the token named by `liquidationPriceToken` at which the health factor (for pooled protocols the account's) reaches 1, every other price fixed: by default the position's collateral token (collateralPrice / healthFactor for an isolated position); with `asset`, that asset's price (its debt: the price whose rise liquidates); null without debt, when the position does not hold the asset, or when no price of it liquidates the account (its other collateral covers the debt). */
            liquidationPrice: number | null;
            /** @description The token whose USD price `liquidationPrice` is; null when `liquidationPrice` is null. */
            liquidationPriceToken: {
                /** @description Lower-case 0x address. */
                address: string;
                symbol: string;
            } | null;
        };
        /** PositionAtRisk */
        PositionAtRisk: {
            /**
             * @description Lending protocol identifier.
             * @enum {string}
             */
            protocol: "morpho" | "aave" | "spark" | "compound" | "euler" | "fluid";
            chainId: number;
            user: {
                /** @description Wallet address of the position owner (for Euler, the EVC sub-account). */
                address: string;
            };
            /** @description collateralUsd x lltv / borrowAssetsUsd; below 1 = liquidatable. For Aave, Spark (per pool), Compound (per comet) and Euler (per controller vault) the account's: sum(collateralUsd x lltv) / sum(borrowAssetsUsd) over the wallet's positions in that pool, the same on each of them. */
            healthFactor: number;
            state: {
                collateralUsd: number;
                borrowAssetsUsd: number;
                supplyAssetsUsd: number;
            };
            market: {
                uniqueKey: string;
                collateralAsset: {
                    symbol: string;
                };
                loanAsset: {
                    symbol: string;
                };
                lltv: number;
            };
            /** @description collateralUsd / (collateralUsd - borrowAssetsUsd), of the account's totals for pooled protocols; null when collateral does not exceed debt. */
            leverage: number | null;
            /** @description 1 - 1 / healthFactor: fraction the collateral price (all of an account's collateral) can fall before liquidation; <= 0 = liquidatable. */
            distanceToLiq: number;
        };
        /**
         * RatingChange
         * @example {
         *       "at": "2026-11-22T00:00:00.000Z",
         *       "grade": "A",
         *       "score": 74.35,
         *       "reason": null,
         *       "previousGrade": "AA",
         *       "previousScore": 80.1,
         *       "methodologyVersion": "1.0.0",
         *       "components": {
         *         "oracle": 85,
         *         "lltvBuffer": 61.2,
         *         "liquidity": 63.47,
         *         "concentration": 72.5,
         *         "liquidations": 100
         *       }
         *     }
         */
        RatingChange: {
            /** @description ISO 8601 UTC instant of the rating. */
            at: string;
            /**
             * @description Grade of the score: AAA (90-100), AA (80), A (70), BBB (60), BB (50), B (40), CCC (30), CC (20), C (10), D (below 10); NR: not graded (below the size floor, or a component without the data it needs; `reason` says which).
             * @enum {string}
             */
            grade: "AAA" | "AA" | "A" | "BBB" | "BB" | "B" | "CCC" | "CC" | "C" | "D" | "NR";
            /** @description Overall score, 0 to 100; null when not graded (grade NR). */
            score: number | null;
            /** @description Why it was not graded (grade NR), with the figures of that day; null when graded. */
            reason: string | null;
            /**
             * @description The grade recorded before (NR: not graded); null for the first rating recorded.
             * @enum {string|null}
             */
            previousGrade: "AAA" | "AA" | "A" | "BBB" | "BB" | "B" | "CCC" | "CC" | "C" | "D" | "NR" | null;
            /** @description The score recorded before; null for the first rating recorded, and when the one before was not graded. */
            previousScore: number | null;
            /**
             * @description Version of the methodology (GET /ratings/methodology).
             * @example 1.0.0
             */
            methodologyVersion: string;
            /** @description Each component's score by name (markets: oracle, lltvBuffer, liquidity, concentration, liquidations, size, usage, history; vaults: markets, diversification, size). */
            components: {
                [key: string]: number;
            };
        };
        /**
         * RatingMethodology
         * @example {
         *       "version": "2.0.0",
         *       "scale": {
         *         "min": 0,
         *         "max": 100,
         *         "decimals": 2
         *       },
         *       "grades": [
         *         {
         *           "grade": "AAA",
         *           "minScore": 90,
         *           "meaning": "Minimal risk: every component strong."
         *         },
         *         {
         *           "grade": "AA",
         *           "minScore": 80,
         *           "meaning": "Very low risk."
         *         },
         *         {
         *           "grade": "A",
         *           "minScore": 70,
         *           "meaning": "Low risk; one component weaker."
         *         },
         *         {
         *           "grade": "BBB",
         *           "minScore": 60,
         *           "meaning": "Moderate risk: adequate, sensitive to adverse moves."
         *         },
         *         {
         *           "grade": "BB",
         *           "minScore": 50,
         *           "meaning": "Elevated risk."
         *         },
         *         {
         *           "grade": "B",
         *           "minScore": 40,
         *           "meaning": "High risk."
         *         },
         *         {
         *           "grade": "CCC",
         *           "minScore": 30,
         *           "meaning": "Very high risk: several weak components."
         *         },
         *         {
         *           "grade": "CC",
         *           "minScore": 20,
         *           "meaning": "Severe risk."
         *         },
         *         {
         *           "grade": "C",
         *           "minScore": 10,
         *           "meaning": "Near failure on most components."
         *         },
         *         {
         *           "grade": "D",
         *           "minScore": 0,
         *           "meaning": "Failing: stale or missing oracle, no buffer, bad debt."
         *         }
         *       ],
         *       "markets": [
         *         {
         *           "name": "oracle",
         *           "weight": 0.2,
         *           "formula": "The provider's base score (provider.*), less customType for a Custom oracle, composite for a price composed from several feeds, perWarning per warning (at most maxWarnings), noFeedData when no feed is listed, and, when the stalest feed is past its heartbeat (stalenessRatio s > 1: its last update is older than its heartbeat), staleMin + (staleMax - staleMin) x min(1, s - 1). No oracle: 0. Clamped to 0-100.",
         *           "parameters": {
         *             "provider.Chainlink": 90,
         *             "provider.Chronicle": 85,
         *             "provider.Redstone": 80,
         *             "provider.Pyth": 80,
         *             "provider.API3": 75,
         *             "provider.Pendle": 75,
         *             "provider.Uniswap": 60,
         *             "provider.Unknown": 40,
         *             "customType": 10,
         *             "composite": 5,
         *             "perWarning": 10,
         *             "maxWarnings": 30,
         *             "staleMin": 25,
         *             "staleMax": 50,
         *             "noFeedData": 10
         *           }
         *         },
         *         {
         *           "name": "lltvBuffer",
         *           "weight": 0.2,
         *           "formula": "Volatility sigma of the collateral/loan price ratio: the sample standard deviation of its daily log returns over the last 90 days (last stored hourly price of each UTC day, consecutive days only) times sqrt(365), when there are at least minReturns; else the default of the two asset families: the peg's (peggedVolatility.*) when both share one, else the larger familyVolatility.*. move = kSigma x sigma / sqrt(365) x sqrt(horizonDays); coverage = (1 - lltv) / move; score = 100 x (coverage - coverageZero) / (coverageFull - coverageZero), clamped to 0-100.",
         *           "parameters": {
         *             "kSigma": 3,
         *             "horizonDays": 1,
         *             "coverageZero": 0.5,
         *             "coverageFull": 2.5,
         *             "minReturns": 7,
         *             "familyVolatility.usd": 0.03,
         *             "familyVolatility.usd-yield": 0.04,
         *             "familyVolatility.eur": 0.08,
         *             "familyVolatility.gold": 0.15,
         *             "familyVolatility.pt": 0.1,
         *             "familyVolatility.eth": 0.75,
         *             "familyVolatility.eth-lst": 0.75,
         *             "familyVolatility.btc": 0.6,
         *             "familyVolatility.major": 0.9,
         *             "familyVolatility.other": 1.2,
         *             "peggedVolatility.usd": 0.03,
         *             "peggedVolatility.eth": 0.06,
         *             "peggedVolatility.btc": 0.04,
         *             "peggedVolatility.eur": 0.03,
         *             "peggedVolatility.gold": 0.05
         *           }
         *         },
         *         {
         *           "name": "liquidity",
         *           "weight": 0.15,
         *           "formula": "utilizationWeight x U + depthWeight x A. U = 100 up to fullUtilization, falling linearly to 0 at 100 % utilization. A = 100 x (log10(available USD) - log10(depthZeroUsd)) / (log10(depthFullUsd) - log10(depthZeroUsd)), clamped to 0-100.",
         *           "parameters": {
         *             "fullUtilization": 0.85,
         *             "depthZeroUsd": 10000,
         *             "depthFullUsd": 10000000,
         *             "utilizationWeight": 0.6,
         *             "depthWeight": 0.4
         *           }
         *         },
         *         {
         *           "name": "concentration",
         *           "weight": 0.1,
         *           "formula": "Over the borrowers' debts now: 100 x (1 - (top10Share + herfindahl) / 2), top10Share the share of the debt owed by the 10 largest borrowers, herfindahl the sum of squared shares. No debt: 100; borrow but no borrower known: not graded.",
         *           "parameters": {
         *             "unknownScore": 50
         *           }
         *         },
         *         {
         *           "name": "liquidations",
         *           "weight": 0.1,
         *           "formula": "Over the liquidations of the last 90 days: 100 - repaidMax x min(1, (repaid USD / borrow) / repaidShareFull) - badDebtMax x min(1, (bad debt USD / borrow) / badDebtShareFull), clamped to 0-100. No stored history for the dataset: not graded.",
         *           "parameters": {
         *             "repaidShareFull": 0.25,
         *             "repaidMax": 30,
         *             "badDebtShareFull": 0.01,
         *             "badDebtMax": 70,
         *             "windowDays": 90,
         *             "unknownScore": 50
         *           }
         *         },
         *         {
         *           "name": "size",
         *           "weight": 0.1,
         *           "formula": "100 x (log10(supply USD) - log10(sizeFloorUsd)) / (log10(sizeFullUsd) - log10(sizeFloorUsd)), clamped to 0-100. Supply below sizeFloorUsd, or of no USD value: not graded.",
         *           "parameters": {
         *             "sizeFloorUsd": 100000,
         *             "sizeFullUsd": 1000000000
         *           }
         *         },
         *         {
         *           "name": "usage",
         *           "weight": 0.05,
         *           "formula": "100 x log10(borrowers with debt) / log10(usageFullBorrowers), clamped to 0-100 (none: 0).",
         *           "parameters": {
         *             "usageFullBorrowers": 1000
         *           }
         *         },
         *         {
         *           "name": "history",
         *           "weight": 0.1,
         *           "formula": "100 x min(1, days / historyFullDays), days = the UTC days of the last 90 with a stored price of both tokens. No stored history for the dataset: not graded.",
         *           "parameters": {
         *             "historyFullDays": 90
         *           }
         *         }
         *       ],
         *       "vaults": [
         *         {
         *           "name": "markets",
         *           "weight": 0.7,
         *           "formula": "Sum over the vault's allocations to graded markets of share x market score, share = the allocation's USD now over the sum of them (equal shares when that sum is 0). No allocation to a graded market: not graded.",
         *           "parameters": {}
         *         },
         *         {
         *           "name": "diversification",
         *           "weight": 0.15,
         *           "formula": "100 x (1 - the sum of the graded allocations' squared shares).",
         *           "parameters": {}
         *         },
         *         {
         *           "name": "size",
         *           "weight": 0.15,
         *           "formula": "100 x (log10(total assets USD) - log10(sizeFloorUsd)) / (log10(sizeFullUsd) - log10(sizeFloorUsd)), clamped to 0-100. Below sizeFloorUsd: not graded.",
         *           "parameters": {
         *             "sizeFloorUsd": 100000,
         *             "sizeFullUsd": 1000000000
         *           }
         *         }
         *       ],
         *       "windowDays": 90,
         *       "changeTolerance": 2,
         *       "unknownScore": 50,
         *       "sizeFloorUsd": 100000,
         *       "notRated": "Grade NR, score null, with the reason: a market supplying less than sizeFloorUsd (or of no USD value), or one of whose components has no data to be computed from (no stored history, borrow without a known borrower, amounts of no USD value); a vault holding less than sizeFloorUsd, or with no allocation to a graded market. Such a component is shown with unknownScore, and no grade rests on it.",
         *       "schedule": "Computed at start-up, daily at 00:00 UTC and when the dataset is replaced; a new rating is recorded in the history when its grade changes, its score moves by changeTolerance points or more, the version changes, or it stops or starts being graded (NR, with its reason); NR after NR is no change, whatever its reason."
         *     }
         */
        RatingMethodology: {
            /**
             * @description Version of the methodology (GET /ratings/methodology).
             * @example 1.0.0
             */
            version: string;
            scale: {
                min: number;
                max: number;
                /** @description Decimals scores are served with. */
                decimals: number;
            };
            /** @description Best first. */
            grades: {
                /**
                 * @description Grade of the score: AAA (90-100), AA (80), A (70), BBB (60), BB (50), B (40), CCC (30), CC (20), C (10), D (below 10).
                 * @enum {string}
                 */
                grade: "AAA" | "AA" | "A" | "BBB" | "BB" | "B" | "CCC" | "CC" | "C" | "D";
                /** @description Lowest score of the grade (inclusive). */
                minScore: number;
                meaning: string;
            }[];
            /** @description A market's components. */
            markets: {
                name: string;
                weight: number;
                /** @description The formula, in words, naming the parameters. */
                formula: string;
                /** @description The thresholds and constants by name. */
                parameters: {
                    [key: string]: number;
                };
            }[];
            /** @description A vault's components. */
            vaults: {
                name: string;
                weight: number;
                /** @description The formula, in words, naming the parameters. */
                formula: string;
                /** @description The thresholds and constants by name. */
                parameters: {
                    [key: string]: number;
                };
            }[];
            /** @description Days of history the volatility and liquidations are read over. */
            windowDays: number;
            /** @description Score move (points) that records a new rating in the history. */
            changeTolerance: number;
            /** @description Score a component whose data is unknown is shown with (its market or vault is then not graded). */
            unknownScore: number;
            /** @description Assets (USD) below which a market or vault is not graded (NR). */
            sizeFloorUsd: number;
            /** @description When a market or vault is not graded (NR). */
            notRated: string;
            /** @description When ratings are computed and recorded. */
            schedule: string;
        };
        /** ResearchReport */
        ResearchReport: {
            /**
             * @description `<YYYY-MM-DD>-<protocol>`.
             * @example 2026-11-24-morpho
             */
            id: string;
            /**
             * Format: date
             * @description The UTC day the report is about.
             */
            date: string;
            protocol: string;
            title: string;
            /** @description Plain sentences, most severe first, from the sections in scope; a quiet day says so. */
            highlights: string[];
            /** Format: date-time */
            generatedAt: string;
            /** @description Version of the digest method. */
            version: string;
            /** @description The data the report rests on. */
            data: {
                /**
                 * @description `sandbox`: simulated data (test keys); `market`: data read from the sources.
                 * @enum {string}
                 */
                kind: "sandbox" | "market";
                /** @description What the data is, in a sentence. */
                description: string;
            };
            /** @description One section per chain, largest supply first. */
            chains: {
                chainId: number;
                /** @description Markets with a daily snapshot that day. */
                markets: number;
                /** @description Supply summed over them, USD (to the cent). */
                supplyUsd: number;
                /** @description Borrow summed over them, USD (to the cent). */
                borrowUsd: number;
                utilization: number;
                /** @description Supply over the day before's, minus 1; null without a day before. */
                supplyChange: number | null;
                liquidations: number;
                /** @description Liquidations whose debt has no known USD value (the loan token had no USD price), left out of the USD sums; absent from reports of version 1.0.0. */
                unpricedLiquidations?: number;
                /** @description Debt the liquidations repaid (the known USD values), USD (to the cent). */
                liquidatedDebtUsd: number;
                /** @description Bad debt they left (the known USD values), USD (to the cent). */
                badDebtUsd: number;
                /** @description Markets of the chain with a utilization spike (every one; the list shows the 10 largest). */
                utilizationSpikes: number;
                /** @description Markets of the chain with a stale oracle at liveAsOf; null for reports written from history alone. */
                staleOracles: number | null;
            }[];
            /** @description Markets whose utilization rose by 10 points or more, or reached 95 %, over the day; largest rise first (10 at most). */
            utilizationSpikes: {
                chainId: number;
                marketId: string;
                pair: string;
                utilization: number;
                previousUtilization: number;
                change: number;
            }[];
            /** @description The largest liquidations of the day by debt repaid, those of no known USD value last (10 at most). */
            notableLiquidations: {
                chainId: number;
                marketId: string;
                txHash: string;
                /** Format: date-time */
                at: string;
                /** @description Lower-case 0x address. */
                borrower: string;
                /** @description Debt repaid, USD (to the cent); null when its token had no USD price. */
                debtRepaidUsd: number | null;
                /** @description Collateral seized, USD (to the cent); null when its token had no USD price. */
                collateralSeizedUsd: number | null;
                /** @description Bad debt, USD (to the cent); null when its token had no USD price. */
                badDebtUsd: number | null;
            }[];
            /** @description Rating changes of the protocol's markets recorded that day, largest score move first. */
            ratingChanges: {
                /** @enum {string} */
                kind: "market" | "vault";
                subject: string;
                chainId: number;
                grade: string;
                score: number;
                previousGrade: string | null;
                previousScore: number | null;
            }[];
            /** @description The largest positions below health factor 1.05 as of liveAsOf; null for reports written from history alone (positions are not kept as history). */
            positionsAtRisk: {
                chainId: number;
                marketId: string;
                /** @description Lower-case 0x address. */
                user: string;
                healthFactor: number;
                /** @description Debt, USD (to the cent). */
                debtUsd: number;
            }[] | null;
            /** @description Markets whose oracle was past its heartbeat as of liveAsOf; null as positionsAtRisk. */
            staleOracles: {
                chainId: number;
                marketId: string;
                /** @description Lower-case 0x address. */
                oracle: string;
                secondsSinceUpdate: number;
                stalenessRatio: number;
            }[] | null;
            liveAsOf: string | null;
            /** @description The same report as Markdown. */
            markdown: string;
        };
        /** ResearchReportSummary */
        ResearchReportSummary: {
            /**
             * @description `<YYYY-MM-DD>-<protocol>`.
             * @example 2026-11-24-morpho
             */
            id: string;
            /**
             * Format: date
             * @description The UTC day the report is about.
             */
            date: string;
            protocol: string;
            title: string;
            /** @description Plain sentences, most severe first, from the sections in scope; a quiet day says so. */
            highlights: string[];
            /** Format: date-time */
            generatedAt: string;
            /** @description The chains it has a section for, in your scope. */
            chainIds: number[];
            /** @description True when it lists positions at risk and stale oracles of market data (written right after its day); always false for sandbox data. */
            live: boolean;
            /** @description The data the report rests on. */
            data: {
                /**
                 * @description `sandbox`: simulated data (test keys); `market`: data read from the sources.
                 * @enum {string}
                 */
                kind: "sandbox" | "market";
                /** @description What the data is, in a sentence. */
                description: string;
            };
        };
        /** Stress */
        Stress: {
            /** @description The shocks as given. */
            shocks: {
                asset: string;
                change: number;
            }[];
            totals: {
                /** @description Markets in scope whose collateral or loan asset moves. */
                markets: number;
                /** @description Positions liquidatable after the move (those liquidatable before included). */
                liquidatablePositions: number;
                /** @description Positions the move makes liquidatable. */
                newlyLiquidatable: number;
                /** @description Debt of the positions liquidatable after the move, valued after it, USD (to the cent). */
                debtAtRiskUsd: number;
                /** @description Collateral liquidators would seize, liquidating them in full at the liquidation bonus, USD (to the cent). */
                collateralSeizedUsd: number;
                /** @description Debt liquidators would repay, USD (to the cent). */
                debtRepaidUsd: number;
                /** @description Debt their collateral would not cover (debt - collateral / (1 + bonus), where positive), USD (to the cent). */
                badDebtUsd: number;
                /** @description Debt of the newly liquidatable positions, valued after the moves, USD (to the cent). */
                newDebtAtRiskUsd: number;
            };
            /** @description Moved markets with positions liquidatable after the moves, by debt at risk (largest first); `limit` of them. */
            markets: {
                marketId: string;
                /**
                 * @description Lending protocol identifier.
                 * @enum {string}
                 */
                protocol: "morpho" | "aave" | "spark" | "compound" | "euler" | "fluid";
                chainId: number;
                collateralAsset: {
                    symbol: string;
                    /** @description The relative price move applied (0: unmoved). */
                    change: number;
                    /** @description The shock it follows: its own symbol, or its base (WETH for wstETH); null when unmoved. */
                    via: string | null;
                };
                loanAsset: {
                    symbol: string;
                    /** @description The relative price move applied (0: unmoved). */
                    change: number;
                    /** @description The shock it follows: its own symbol, or its base (WETH for wstETH); null when unmoved. */
                    via: string | null;
                };
                /** @description (1 + collateral move) / (1 + loan move): the market's health factors are multiplied by it. */
                healthFactorScale: number;
                /** @description Positions liquidatable after the move (those liquidatable before included). */
                liquidatablePositions: number;
                /** @description Positions the move makes liquidatable. */
                newlyLiquidatable: number;
                /** @description Debt of the positions liquidatable after the move, valued after it, USD (to the cent). */
                debtAtRiskUsd: number;
                /** @description Collateral liquidators would seize, liquidating them in full at the liquidation bonus, USD (to the cent). */
                collateralSeizedUsd: number;
                /** @description Debt liquidators would repay, USD (to the cent). */
                debtRepaidUsd: number;
                /** @description Debt their collateral would not cover (debt - collateral / (1 + bonus), where positive), USD (to the cent). */
                badDebtUsd: number;
                /** @description Debt of the newly liquidatable positions, valued after the moves, USD (to the cent). */
                newDebtAtRiskUsd: number;
            }[];
        };
        /** TimeseriesPoint */
        TimeseriesPoint: {
            /**
             * Format: date
             * @description The UTC day.
             */
            date: string;
            /** @description The protocol of the point (groupBy=protocol); null when grouped by chain. */
            protocol: string | null;
            /** @description The chain of the point (groupBy=chain); null when grouped by protocol. */
            chainId: number | null;
            /** @description Markets with a daily snapshot that day. */
            markets: number;
            /** @description Sum of the markets' supply in their daily snapshots, USD (to the cent). */
            supplyUsd: number;
            /** @description Sum of the markets' borrow, USD (to the cent). */
            borrowUsd: number;
            /** @description borrowUsd / supplyUsd. */
            utilization: number;
            /** @description Liquidations that day. */
            liquidations: number;
            /** @description Liquidations that day with an amount of no known USD value (its token had no USD price): counted in liquidations, that amount left out of the USD sums. */
            unpricedLiquidations: number;
            /** @description Debt they repaid (the known USD values), USD (to the cent). */
            liquidatedDebtUsd: number;
            /** @description Collateral they seized (the known USD values), USD (to the cent). */
            collateralSeizedUsd: number;
            /** @description Bad debt they left (the known USD values), USD (to the cent). */
            badDebtUsd: number;
        };
        /**
         * Token
         * @example {
         *       "chainId": 1,
         *       "address": "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2",
         *       "symbol": "WETH",
         *       "name": "Wrapped Ether",
         *       "decimals": 18,
         *       "priceUsd": 3398.7,
         *       "priceSource": {
         *         "kind": "feed",
         *         "address": "0x5f4ec3df9cbd43714fe2740f5e3616155c5b8419",
         *         "description": "ETH / USD"
         *       },
         *       "collateralMarkets": 84,
         *       "loanMarkets": 145,
         *       "supplyUsd": 6754352740.57,
         *       "borrowUsd": 3701120326.91
         *     }
         */
        Token: {
            /** @example 1 */
            chainId: number;
            /** @description Lower-case 0x address. */
            address: string;
            /** @example WETH */
            symbol: string;
            /** @example Wrapped Ether */
            name: string;
            /**
             * @description ERC-20 decimals; null when unknown.
             * @example 18
             */
            decimals: number | null;
            /** @description USD price in the largest market (by supply) that holds the token, 8 significant digits; null when unknown. */
            priceUsd: number | null;
            /** @description Where priceUsd comes from: the price source of the market priceUsd is taken from, as the data's source recorded it. Data that records none (the sandbox): the USD-quoted feed of the token (or of the asset it wraps) on its chain, else the oracle of its largest collateral market. null when none is known. */
            priceSource: {
                /**
                 * @description 'feed': a Chainlink feed of the sources file; 'oracle': the market's own oracle; 'api': an API's price (the Morpho API's priceUsd).
                 * @enum {string}
                 */
                kind: "feed" | "oracle" | "api";
                /** @description The feed's or the oracle's address; null for an API. */
                address: string | null;
                /** @description The feed's description (`X / ETH × ETH / USD` through ETH), the oracle's type and provider, or the API's field. */
                description: string;
            } | null;
            /** @description Markets that take it as collateral. */
            collateralMarkets: number;
            /** @description Markets that lend it. */
            loanMarkets: number;
            /** @description Supplied over the markets that lend it, USD (to the cent); null when one of them has no USD price (never 0: the amount is unknown, not nothing). */
            supplyUsd: number | null;
            /** @description Borrowed over the markets that lend it, USD (to the cent); null when one of them has no USD price (never 0: the amount is unknown, not nothing). */
            borrowUsd: number | null;
        };
        /** TokenDetail */
        TokenDetail: {
            /** @example 1 */
            chainId: number;
            /** @description Lower-case 0x address. */
            address: string;
            /** @example WETH */
            symbol: string;
            /** @example Wrapped Ether */
            name: string;
            /**
             * @description ERC-20 decimals; null when unknown.
             * @example 18
             */
            decimals: number | null;
            /** @description USD price in the largest market (by supply) that holds the token, 8 significant digits; null when unknown. */
            priceUsd: number | null;
            /** @description Where priceUsd comes from: the price source of the market priceUsd is taken from, as the data's source recorded it. Data that records none (the sandbox): the USD-quoted feed of the token (or of the asset it wraps) on its chain, else the oracle of its largest collateral market. null when none is known. */
            priceSource: {
                /**
                 * @description 'feed': a Chainlink feed of the sources file; 'oracle': the market's own oracle; 'api': an API's price (the Morpho API's priceUsd).
                 * @enum {string}
                 */
                kind: "feed" | "oracle" | "api";
                /** @description The feed's or the oracle's address; null for an API. */
                address: string | null;
                /** @description The feed's description (`X / ETH × ETH / USD` through ETH), the oracle's type and provider, or the API's field. */
                description: string;
            } | null;
            /** @description Markets that take it as collateral. */
            collateralMarkets: number;
            /** @description Markets that lend it. */
            loanMarkets: number;
            /** @description Supplied over the markets that lend it, USD (to the cent); null when one of them has no USD price (never 0: the amount is unknown, not nothing). */
            supplyUsd: number | null;
            /** @description Borrowed over the markets that lend it, USD (to the cent); null when one of them has no USD price (never 0: the amount is unknown, not nothing). */
            borrowUsd: number | null;
            /** @description Feeds on its chain that price it (USD-quoted first). */
            feeds: {
                /** @description Lower-case 0x address. */
                address: string;
                description: string;
                /** @example ETH/USD */
                pair: string;
                /** @description Maximum interval the feed promises between updates. */
                heartbeatSeconds: number;
                /**
                 * @description Price move that makes the feed update before its heartbeat, as a fraction (0.005 = 0.5 %); null when unknown.
                 * @example 0.005
                 */
                deviationThreshold: number | null;
                /** @description Unix seconds of its last update. */
                lastUpdateTimestamp: number;
                /** @description now - lastUpdateTimestamp. */
                secondsSinceUpdate: number;
                /** @description stalenessRatio > 1. */
                isStale: boolean;
                /** @description secondsSinceUpdate / heartbeatSeconds. */
                stalenessRatio: number;
            }[];
            /** @description Every market holding it, largest supply first (those without one last). */
            markets: {
                uniqueKey: string;
                /**
                 * @description Lending protocol identifier.
                 * @enum {string}
                 */
                protocol: "morpho" | "aave" | "spark" | "compound" | "euler" | "fluid";
                /** @enum {string} */
                role: "collateral" | "loan";
                /** @description Market supply, USD (to the cent); null when the market has no USD price (never 0: the amount is unknown, not nothing). */
                supply: number | null;
                /** @description Market borrow, USD (to the cent); null when the market has no USD price (never 0: the amount is unknown, not nothing). */
                borrow: number | null;
            }[];
        };
        /** Vault */
        Vault: {
            /** @enum {string} */
            protocol: "morpho" | "euler";
            /** @example 1 */
            chainId: number;
            /** @description Lower-case 0x address. */
            address: string;
            /** @example Steakhouse USDC */
            name: string;
            symbol: string;
            asset: {
                /** @description Lower-case 0x address. */
                address: string;
                symbol: string;
            };
            /** @description Morpho vaults: the curator; null for Euler vaults or when unknown. */
            curator: string | null;
            /** @description Euler vaults: the governor; null for Morpho vaults or when unknown. */
            governor: string | null;
            /** @description Fee on the interest earned (Morpho performance fee, Euler interest fee), 0 to 1. */
            fee: number;
            /** @description Sum of the allocations (the vault's share of each market's supply now) and of its idle assets (governance.idleAssets), USD; null when a market it supplies has no USD price of its asset. */
            totalAssetsUsd: number | null;
            /** @description Supply APY of the allocations weighted by their USD (by their amounts of the asset when one has no USD price), idle assets earning none, net of the fee (rewards excluded), decimal. */
            apy: number;
            /** @description Largest first. */
            allocations: {
                /** @description Market uniqueKey. */
                marketId: string;
                /** @description Collateral symbol; null when the market is not served. */
                collateral: string | null;
                /** @description Loan symbol; null when the market is not served. */
                loan: string | null;
                /** @description What the vault supplies to the market, USD; null when the market has no USD price of the asset. */
                supplyUsd: number | null;
                /** @description The allocation's part of the vault's assets, 0 to 1. */
                share: number;
                /** @description The most the vault may supply to the market, USD at the market's price now; null: no cap, or no USD price of the asset (supplyCap says which). */
                supplyCapUsd: number | null;
                /** @description The same cap in units of the asset (8 significant digits); null: no cap. */
                supplyCap: number | null;
                /** @description What the vault supplies to the market over its cap, in units of the asset (else USD); null without a cap. */
                capUsage: number | null;
                /** @description The market's supply APY, decimal. */
                supplyApy: number | null;
                /** @description The market's strategy type. */
                strategyType: string | null;
                /**
                 * @description The market's strategy risk level.
                 * @enum {string|null}
                 */
                riskLevel: "low" | "medium" | "high" | null;
                /** @description Oracle freshness (the stalest feed of a composite oracle); null without oracle data. */
                oracleHealth: {
                    /** @description Unix seconds of the last update (of the stalest feed). */
                    lastUpdateTimestamp: number;
                    /** @description now - lastUpdateTimestamp, seconds. */
                    secondsSinceUpdate: number;
                    /** @description Maximum interval the feed promises between updates. */
                    expectedHeartbeatSeconds: number;
                    /** @description stalenessRatio > 1. */
                    isStale: boolean;
                    /** @description secondsSinceUpdate / expectedHeartbeatSeconds. */
                    stalenessRatio: number;
                } | null;
            }[];
            /** @description A Morpho vault read from its contract on chain: its roles, queues, total assets and the changes its timelock holds. Null for Euler vaults and where the vault's source does not read them (the Morpho API, the sandbox). */
            governance: {
                /** @description Lower-case 0x address. */
                owner: string;
                /** @description May revoke pending changes; null: none. */
                guardian: string | null;
                /** @description Receives the performance fee; null: none set. */
                feeRecipient: string | null;
                /** @description The delay before a cap raise, a timelock cut, a new guardian or a market removal may be accepted. */
                timelockSeconds: number;
                /** @description Market uniqueKeys deposits go to, in order. */
                supplyQueue: string[];
                /** @description Market uniqueKeys withdrawals come from, in order: every market the vault has enabled. */
                withdrawQueue: string[];
                /** @description The vault's supply in all its markets, idle ones included, in units of the asset (8 significant digits): its supply shares valued at each market's state of the last pass. */
                totalAssets: number;
                /** @description Its part in idle markets (no collateral: no borrower, no interest), in no allocation; counted in totalAssetsUsd, and at a 0 APY in apy. */
                idleAssets: number;
                /** @description Bad debt its markets realized against the vault, in units of the asset (MetaMorpho v1.1); null: a v1.0 vault, which does not track it. */
                lostAssets: number | null;
                /** @description Cap raises waiting for the timelock. */
                pendingCaps: {
                    /** @description Market uniqueKey. */
                    marketId: string;
                    /** @description The cap raised to, in units of the asset; null: no cap. */
                    cap: number | null;
                    /**
                     * Format: date-time
                     * @description From when anyone may accept it (it applies once accepted).
                     */
                    validAt: string;
                    /** @description Whether validAt has passed. */
                    acceptable: boolean;
                }[];
                /** @description Markets submitted for removal (their cap set to 0). */
                pendingRemovals: {
                    /** @description Market uniqueKey. */
                    marketId: string;
                    /**
                     * Format: date-time
                     * @description From when the market may be removed from the withdraw queue (its supply written off).
                     */
                    removableAt: string;
                    /** @description Whether removableAt has passed. */
                    removable: boolean;
                }[];
                /** @description A timelock cut waiting for the current timelock (a raise applies at once); null: none. */
                pendingTimelock: {
                    /** @description The new timelock. */
                    seconds: number;
                    /**
                     * Format: date-time
                     * @description From when anyone may accept it (it applies once accepted).
                     */
                    validAt: string;
                    /** @description Whether validAt has passed. */
                    acceptable: boolean;
                } | null;
                /** @description A guardian change waiting for the timelock; null: none. */
                pendingGuardian: {
                    /** @description The new guardian; null: none. */
                    guardian: string | null;
                    /**
                     * Format: date-time
                     * @description From when anyone may accept it (it applies once accepted).
                     */
                    validAt: string;
                    /** @description Whether validAt has passed. */
                    acceptable: boolean;
                } | null;
                /** @description The block the vault's contract was last read at: again at each pass that sees one of its own logs. */
                block: number;
            } | null;
        };
        /**
         * VaultRating
         * @example {
         *       "protocol": "morpho",
         *       "chainId": 1,
         *       "address": "0xbeef01735c132ada46aa9aa4c54623caa92a64cb",
         *       "name": "Steakhouse USDC",
         *       "asset": "USDC",
         *       "grade": "BBB",
         *       "score": 67.68,
         *       "reason": null,
         *       "methodologyVersion": "2.0.0",
         *       "ratedAt": "2026-11-22T00:00:00.000Z",
         *       "components": {
         *         "markets": {
         *           "score": 79,
         *           "weight": 0.7,
         *           "explanation": "Supply-weighted score of its 2 graded markets ($2,000,000 allocated): 79.00."
         *         },
         *         "diversification": {
         *           "score": 50,
         *           "weight": 0.15,
         *           "explanation": "Largest allocation 50.0 % of assets; Herfindahl index 0.500 (2.0 markets' worth of diversification)."
         *         },
         *         "size": {
         *           "score": 32.53,
         *           "weight": 0.15,
         *           "explanation": "$2,000,000 held (the floor of $100,000 scores 0, $1,000,000,000 scores 100)."
         *         }
         *       },
         *       "metrics": {
         *         "totalAssetsUsd": 2000000,
         *         "allocations": 2,
         *         "ratedAllocations": 2,
         *         "herfindahl": 0.5,
         *         "largestShare": 0.5
         *       },
         *       "allocations": [
         *         {
         *           "marketId": "morpho-1-0xb323495f7e4148be5643a4ea4a8221eef163e4bccfdedc2a6f4696baacbc86cc",
         *           "share": 0.5,
         *           "grade": "AA",
         *           "score": 83
         *         },
         *         {
         *           "marketId": "morpho-1-0x3a85e619751152991742810df6ec69ce473daef99e28a64ab2340d7b7ccfee49",
         *           "share": 0.5,
         *           "grade": "A",
         *           "score": 75
         *         }
         *       ]
         *     }
         */
        VaultRating: {
            /** @enum {string} */
            protocol: "morpho" | "euler";
            /** @example 1 */
            chainId: number;
            /** @description Lower-case vault address. */
            address: string;
            name: string;
            /** @description Symbol of the asset the vault lends. */
            asset: string;
            /**
             * @description Grade of the score: AAA (90-100), AA (80), A (70), BBB (60), BB (50), B (40), CCC (30), CC (20), C (10), D (below 10); NR: not graded (below the size floor, or a component without the data it needs; `reason` says which).
             * @enum {string}
             */
            grade: "AAA" | "AA" | "A" | "BBB" | "BB" | "B" | "CCC" | "CC" | "C" | "D" | "NR";
            /** @description Overall score, 0 to 100: 0.7 x markets + 0.15 x diversification + 0.15 x size (2 decimals); null when not graded (NR). */
            score: number | null;
            /** @description Why it is not graded (grade NR), with the figures; null when graded. */
            reason: string | null;
            /**
             * @description Version of the methodology (GET /ratings/methodology).
             * @example 1.0.0
             */
            methodologyVersion: string;
            /** @description ISO 8601 UTC instant the rating was computed at (ratings are computed daily at 00:00 UTC). */
            ratedAt: string;
            /** @description The three component scores, their weights and why. */
            components: {
                markets: {
                    /** @description The component score, 0 to 100 (2 decimals). */
                    score: number;
                    /** @description The component's weight in the overall score. */
                    weight: number;
                    /** @description How the score was reached, in one line. */
                    explanation: string;
                };
                diversification: {
                    /** @description The component score, 0 to 100 (2 decimals). */
                    score: number;
                    /** @description The component's weight in the overall score. */
                    weight: number;
                    /** @description How the score was reached, in one line. */
                    explanation: string;
                };
                size: {
                    /** @description The component score, 0 to 100 (2 decimals). */
                    score: number;
                    /** @description The component's weight in the overall score. */
                    weight: number;
                    /** @description How the score was reached, in one line. */
                    explanation: string;
                };
            };
            metrics: {
                /** @description The vault's supply over its markets when rated, USD; null when one of them has no USD price of the asset (then allocations weigh by amounts of the asset). */
                totalAssetsUsd: number | null;
                /** @description Markets allocated to. */
                allocations: number;
                /** @description Of them, markets rated (served now). */
                ratedAllocations: number;
                /** @description Herfindahl index of the allocation shares, 0 to 1. */
                herfindahl: number;
                /** @description The largest allocation share, 0 to 1. */
                largestShare: number;
            };
            /** @description Largest first. */
            allocations: {
                /** @description Market uniqueKey. */
                marketId: string;
                /** @description The allocation's part of the vault's assets, 0 to 1. */
                share: number;
                /**
                 * @description The market's grade (NR: not graded); null when the market is not served.
                 * @enum {string|null}
                 */
                grade: "AAA" | "AA" | "A" | "BBB" | "BB" | "B" | "CCC" | "CC" | "C" | "D" | "NR" | null;
                /** @description The market's score; null when the market is not served or not graded. */
                score: number | null;
            }[];
        };
        /** WalletRisk */
        WalletRisk: {
            /** @description Lower-case 0x address. */
            address: string;
            /**
             * @description From the weakest health factor: critical < 1, high < 1.1, medium < 1.25, low otherwise; none without debt.
             * @enum {string}
             */
            riskLevel: "none" | "low" | "medium" | "high" | "critical";
            /** @description Lowest health factor of the positions with debt; null without debt. */
            weakestHealthFactor: number | null;
            /** @description The health factor `toTarget` brings each position to. */
            targetHealthFactor: number;
            /** @description Collateral of the positions with debt, USD (to the cent). */
            collateralUsd: number;
            /** @description Their debt, USD (to the cent). */
            debtUsd: number;
            borrowPositions: number;
            /** @description Critical first, in position order. */
            flags: {
                /** @description What is flagged. A wallet's positions: LIQUIDATABLE (health factor below 1), NEAR_LIQUIDATION (below 1.1), BELOW_TARGET (below the target health factor asked), STALE_ORACLE (its market oracle is past its heartbeat). A market: LIQUIDATABLE_POSITIONS, HIGH_UTILIZATION (95 % or more), STALE_ORACLE, NO_ORACLE, CONCENTRATED_BORROWERS (Herfindahl index of borrowers 0.25 or more), BAD_DEBT_UNDER_STRESS (a 20 % collateral fall leaves bad debt), THIN_LIQUIDITY (a 10 % fall's liquidations would repay more than the market holds), NO_USD_PRICE (a token without a USD price). `reason` says why, with the figures. */
                code: string;
                /** @enum {string} */
                severity: "critical" | "warning" | "info";
                /** @description Why, in plain language, with the figures it was decided on. */
                reason: string;
                /** @description The market flagged; null for the whole wallet. */
                marketId: string | null;
            }[];
            /** @description Positions with debt, weakest first. */
            positions: {
                marketId: string;
                /**
                 * @description Lending protocol identifier.
                 * @enum {string}
                 */
                protocol: "morpho" | "aave" | "spark" | "compound" | "euler" | "fluid";
                chainId: number;
                collateral: {
                    symbol: string;
                    priceUsd: number;
                    /** @description The collateral price at which the health factor (the account's, for pooled protocols) reaches 1, all else fixed. */
                    liquidationPriceUsd: number | null;
                };
                loan: {
                    symbol: string;
                    priceUsd: number;
                };
                /** @description Collateral, USD (to the cent). */
                collateralUsd: number;
                /** @description Debt, USD (to the cent). */
                debtUsd: number;
                healthFactor: number;
                toTarget: {
                    /** @description Debt to repay to reach the target: debt x (1 - healthFactor / target), the account's debt for pooled protocols; 0 when at or above it, USD (to the cent). */
                    repayUsd: number;
                    /** @description The same in loan tokens at their price now. */
                    repayAmount: number;
                    /** @description Collateral to add instead, USD: collateral x (target / healthFactor - 1); for pooled protocols, of this market's collateral at its lltv toward the account: (target x debt - sum(collateral x lltv)) / lltv; 0 when at or above it; null without collateral. */
                    addCollateralUsd: number | null;
                    /** @description The same in collateral tokens at their price now. */
                    addCollateralAmount: number | null;
                };
            }[];
        };
    };
    responses: {
        /** @description Forbidden: `CHAIN_FORBIDDEN` or `TIER_FORBIDDEN`. */
        ChainForbiddenOrTierForbidden: {
            headers: {
                "Cache-Control": components["headers"]["Cache-Control"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Request Header Fields Too Large: `HEADERS_TOO_LARGE`. The request headers are over 16 KB; the connection is closed. */
        HeadersTooLarge: {
            headers: {
                "Cache-Control": components["headers"]["Cache-Control"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Conflict: `IDEMPOTENCY_KEY_IN_USE`. */
        IdempotencyKeyInUse: {
            headers: {
                "Cache-Control": components["headers"]["Cache-Control"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                "Retry-After": components["headers"]["Retry-After"];
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Unprocessable Content: `IDEMPOTENCY_KEY_REUSED`. */
        IdempotencyKeyReused: {
            headers: {
                "Cache-Control": components["headers"]["Cache-Control"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Internal Server Error: `INTERNAL_ERROR`. */
        InternalError: {
            headers: {
                "Cache-Control": components["headers"]["Cache-Control"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Bad Request: `INVALID_PARAMETER`. */
        InvalidParameter: {
            headers: {
                "Cache-Control": components["headers"]["Cache-Control"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Too Many Requests: `KEY_CREATION_RATE_EXCEEDED` or `RATE_LIMIT_EXCEEDED`. Over a limit: the per-second rate, a quota, or (without a valid key) the budget of anonymous requests of your address. `Retry-After` says when to retry. */
        KeyCreationRateExceededOrRateLimitExceeded: {
            headers: {
                "Cache-Control": components["headers"]["Cache-Control"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                "Retry-After": components["headers"]["Retry-After"];
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Forbidden: `KEY_LIMIT_REACHED`. */
        KeyLimitReached: {
            headers: {
                "Cache-Control": components["headers"]["Cache-Control"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Not Found: `KEY_NOT_FOUND`. */
        KeyNotFound: {
            headers: {
                "Cache-Control": components["headers"]["Cache-Control"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Not Found: `MARKET_NOT_FOUND`. */
        MarketNotFound: {
            headers: {
                "Cache-Control": components["headers"]["Cache-Control"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Method Not Allowed: `METHOD_NOT_ALLOWED`. The path exists, but not with this method (answered before authentication); `Allow` lists the methods it has. */
        MethodNotAllowed: {
            headers: {
                Allow: components["headers"]["Allow"];
                "Cache-Control": components["headers"]["Cache-Control"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Not Found: `ORACLE_NOT_FOUND`. */
        OracleNotFound: {
            headers: {
                "Cache-Control": components["headers"]["Cache-Control"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Content Too Large: `PAYLOAD_TOO_LARGE`. */
        PayloadTooLarge: {
            headers: {
                "Cache-Control": components["headers"]["Cache-Control"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Too Many Requests: `RATE_LIMIT_EXCEEDED`. Over a limit: the per-second rate, a quota, or (without a valid key) the budget of anonymous requests of your address. `Retry-After` says when to retry. */
        RateLimitExceeded: {
            headers: {
                "Cache-Control": components["headers"]["Cache-Control"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                "Retry-After": components["headers"]["Retry-After"];
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Too Many Requests: `RATE_LIMIT_EXCEEDED` or `DAILY_QUOTA_EXCEEDED` or `MONTHLY_QUOTA_EXCEEDED`. Over a limit: the per-second rate, a quota, or (without a valid key) the budget of anonymous requests of your address. `Retry-After` says when to retry. */
        RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded: {
            headers: {
                "Cache-Control": components["headers"]["Cache-Control"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                "Retry-After": components["headers"]["Retry-After"];
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Not Found: `REPORT_NOT_FOUND`. */
        ReportNotFound: {
            headers: {
                "Cache-Control": components["headers"]["Cache-Control"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Request Timeout: `REQUEST_TIMEOUT`. The request (headers and body) did not arrive in time; the connection is closed. */
        RequestTimeout: {
            headers: {
                "Cache-Control": components["headers"]["Cache-Control"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Service Unavailable: `SERVICE_UNAVAILABLE`. Overloaded, shutting down, or a backend briefly unavailable: retry after `Retry-After` seconds. */
        ServiceUnavailable: {
            headers: {
                "Cache-Control": components["headers"]["Cache-Control"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                "Retry-After": components["headers"]["Retry-After"];
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Too Many Requests: `STREAM_LIMIT_REACHED` or `RATE_LIMIT_EXCEEDED` or `DAILY_QUOTA_EXCEEDED` or `MONTHLY_QUOTA_EXCEEDED`. Over a limit: the per-second rate, a quota, or (without a valid key) the budget of anonymous requests of your address. `Retry-After` says when to retry. */
        StreamLimitReachedOrRateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded: {
            headers: {
                "Cache-Control": components["headers"]["Cache-Control"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                "Retry-After": components["headers"]["Retry-After"];
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Forbidden: `TIER_FORBIDDEN`. */
        TierForbidden: {
            headers: {
                "Cache-Control": components["headers"]["Cache-Control"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Forbidden: `TIER_FORBIDDEN` or `WEBHOOK_LIMIT_REACHED`. */
        TierForbiddenOrWebhookLimitReached: {
            headers: {
                "Cache-Control": components["headers"]["Cache-Control"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Not Found: `TOKEN_NOT_FOUND`. */
        TokenNotFound: {
            headers: {
                "Cache-Control": components["headers"]["Cache-Control"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Unauthorized: `UNAUTHORIZED`. */
        Unauthorized: {
            headers: {
                "Cache-Control": components["headers"]["Cache-Control"];
                "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Unsupported Media Type: `UNSUPPORTED_MEDIA_TYPE`. */
        UnsupportedMediaType: {
            headers: {
                "Cache-Control": components["headers"]["Cache-Control"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Not Found: `VAULT_NOT_FOUND`. */
        VaultNotFound: {
            headers: {
                "Cache-Control": components["headers"]["Cache-Control"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Not Found: `WEBHOOK_NOT_FOUND`. */
        WebhookNotFound: {
            headers: {
                "Cache-Control": components["headers"]["Cache-Control"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
    };
    parameters: {
        /**
         * @description Oracle contract address.
         * @example 0x7f39c581f595b53c5cb19bd0b3f8da6c935e2ca0
         */
        address: string;
        /**
         * @description Vault contract address.
         * @example 0x7f39c581f595b53c5cb19bd0b3f8da6c935e2ca0
         */
        "address-2": string;
        /**
         * @description Wallet address.
         * @example 0x7f39c581f595b53c5cb19bd0b3f8da6c935e2ca0
         */
        "address-3": string;
        /**
         * @description Only vaults of this asset symbol (case-insensitive).
         * @example USDC
         */
        asset: string;
        /**
         * @description Chain id, e.g. 1 (Ethereum). A chain outside your tier: 403 CHAIN_FORBIDDEN.
         * @example 1
         */
        chainId: number;
        /**
         * @description Comma-separated chain ids, e.g. `1,8453`. Filtered to the tier's chains; omitted, the scope is the tier's chains.
         * @example 1,8453
         */
        chainIds: string;
        /** @description Opaque cursor from `meta.nextCursor` of the previous page (the other parameters unchanged). */
        cursor: string;
        /**
         * @description ISO 8601 date or date-time (UTC when no offset): items up to this instant; a date includes its whole day. Before startDate: 400.
         * @example 2026-11-20
         */
        endDate: string;
        /** @description Only ratings of this grade (NR: those not graded). */
        grade: "AAA" | "AA" | "A" | "BBB" | "BB" | "B" | "CCC" | "CC" | "C" | "D" | "NR";
        /**
         * @description Maximum results (default 50). Values above min(200, the tier's result cap) are lowered silently and reported in meta.clamped.
         * @example 50
         */
        limit: number;
        /**
         * @description Maximum results (default 50). Values above min(1000, the tier's result cap) are lowered silently and reported in meta.clamped.
         * @example 50
         */
        "limit-2": number;
        /**
         * @description Maximum results (default 50). Values above min(10000, the tier's result cap) are lowered silently and reported in meta.clamped.
         * @example 50
         */
        "limit-3": number;
        /**
         * @description Maximum results (default 50). Values above min(500, the tier's result cap) are lowered silently and reported in meta.clamped.
         * @example 50
         */
        "limit-4": number;
        /**
         * @description Market uniqueKey: `<protocol>-<chainId>-<identifier>`.
         * @example morpho-1-0xb323495f7e4148be5643a4ea4a8221eef163e4bccfdedc2a6f4696baacbc86cc
         */
        marketId: string;
        /**
         * @description Only ratings scoring at least this (0 to 100).
         * @example 70
         */
        minScore: number;
        /** @description By score: `desc` (default) best first, `asc` worst first; ties by id. Page with `cursor`. */
        order: "desc" | "asc";
        /** @description Only markets of this protocol. */
        protocol: "morpho" | "aave" | "spark" | "compound" | "euler" | "fluid";
        /** @description Only this protocol. */
        "protocol-2": "morpho" | "euler";
        /**
         * @description ISO 8601 date or date-time (UTC). Raised to the start of the tier's history window.
         * @example 2026-11-01
         */
        startDate: string;
        /**
         * @description Id of the webhook.
         * @example wh_4mQp8ZrT2vLx9KcB1nWd
         */
        webhookId: string;
    };
    requestBodies: never;
    headers: {
        /** @description The methods the path has, e.g. `GET, OPTIONS`. */
        Allow: string;
        /** @description `private, max-age=0, must-revalidate` on data; `no-store` on errors and client answers. */
        "Cache-Control": string;
        /** @description Strong tag of the data in the answer, one per content-coding (`"…-br"`, `"…-gzip"` for compressed bodies); send it back in If-None-Match to get 304 while unchanged (any coding's tag revalidates). */
        ETag: string;
        /** @description On a replay (same Idempotency-Key and body): this is the first answer again. */
        "Idempotent-Replayed": "true";
        /** @description The policy closest to exhaustion, e.g. `"daily";r=9000;t=43200`. */
        RateLimit: string;
        /** @description Every policy that applies (the per-second window; on a counted request also the daily and the monthly quota, a month counted as 30 days), e.g. `"per-second";q=20;w=1, "daily";q=10000;w=86400, "monthly";q=300000;w=2592000`. */
        "RateLimit-Policy": string;
        /** @description Seconds to wait before retrying. */
        "Retry-After": number;
        /** @description `Bearer`: the scheme a key is sent with (RFC 6750). */
        "WWW-Authenticate": string;
        /** @description Requests allowed per second (the per-second window). */
        "X-RateLimit-Limit": number;
        /** @description Requests left in the window after this one. */
        "X-RateLimit-Remaining": number;
        /** @description Unix ms when the oldest request in the window leaves it. */
        "X-RateLimit-Reset": number;
        /** @description Id of this request: the X-Request-Id you sent (1-128 of [A-Za-z0-9._:-]) or the trace id of your traceparent, else ours. */
        "X-Request-Id": string;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    apiRoot: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Where things are. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "name": "Lending Risk Data API",
                     *       "version": "1.0.0",
                     *       "apiUrl": "/api/v1",
                     *       "documentationUrl": "/docs/",
                     *       "openapiUrl": "/api/v1/openapi.json",
                     *       "healthUrl": "/api/v1/health",
                     *       "dashboardUrl": "/dashboard",
                     *       "marketsUrl": "/api/v1/markets",
                     *       "marketSearchUrl": "/api/v1/markets/search{?query}",
                     *       "marketUrl": "/api/v1/markets/{marketId}",
                     *       "positionsAtRiskUrl": "/api/v1/risk/positions-at-risk",
                     *       "quotaUrl": "/api/v1/client/quota"
                     *     }
                     */
                    "application/json": {
                        name: string;
                        /** @description Version of the API (of this document). */
                        version: string;
                        /** @description The API: every other path is under it. */
                        apiUrl: string;
                        /** @description The documentation page, rendered from the OpenAPI document. */
                        documentationUrl: string;
                        /** @description The OpenAPI 3.1 document. */
                        openapiUrl: string;
                        /** @description Health of the service (no key needed). */
                        healthUrl: string;
                        /** @description The quota dashboard of a key holder. */
                        dashboardUrl: string;
                        /** @description Markets by supply. */
                        marketsUrl: string;
                        /** @description Market search; `{?query}` stands for `?query=…`. */
                        marketSearchUrl: string;
                        /** @description One market; fill in `{marketId}`. */
                        marketUrl: string;
                        /** @description Positions close to liquidation. */
                        positionsAtRiskUrl: string;
                        /** @description Your key's quota, use and limits. */
                        quotaUrl: string;
                    };
                };
            };
            400: components["responses"]["InvalidParameter"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    agentMarketBrief: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description Market uniqueKey: `<protocol>-<chainId>-<identifier>`.
                 * @example morpho-1-0xb323495f7e4148be5643a4ea4a8221eef163e4bccfdedc2a6f4696baacbc86cc
                 */
                marketId: components["parameters"]["marketId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["MarketBrief"];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ChainForbiddenOrTierForbidden"];
            404: components["responses"]["MarketNotFound"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    mcp: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "jsonrpc": "2.0",
                 *       "id": 1,
                 *       "method": "tools/call",
                 *       "params": {
                 *         "name": "search_markets",
                 *         "arguments": {
                 *           "query": "wstETH/WETH",
                 *           "limit": 3
                 *         }
                 *       }
                 *     }
                 */
                "application/json": ({
                    /** @enum {string} */
                    jsonrpc: "2.0";
                    /**
                     * @description The request id (a string or a number), echoed by its answer; absent on a notification.
                     * @example 1
                     */
                    id?: unknown;
                    /** @description `initialize`, `notifications/initialized`, `ping`, `tools/list` or `tools/call` (others: JSON-RPC error -32601). */
                    method?: string;
                    /** @description tools/call: `{ "name": <tool>, "arguments": { … } }`. */
                    params?: {
                        [key: string]: unknown;
                    };
                } & {
                    [key: string]: unknown;
                }) | ({
                    /** @enum {string} */
                    jsonrpc: "2.0";
                    /**
                     * @description The request id (a string or a number), echoed by its answer; absent on a notification.
                     * @example 1
                     */
                    id?: unknown;
                    /** @description `initialize`, `notifications/initialized`, `ping`, `tools/list` or `tools/call` (others: JSON-RPC error -32601). */
                    method?: string;
                    /** @description tools/call: `{ "name": <tool>, "arguments": { … } }`. */
                    params?: {
                        [key: string]: unknown;
                    };
                } & {
                    [key: string]: unknown;
                })[];
            };
        };
        responses: {
            /** @description The JSON-RPC answer (an array of them for a batch). */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        jsonrpc: "2.0";
                        id: string | number | null;
                        /** @description tools/call: `{ content: [{ type: "text", text }], structuredContent, isError? }`; the text is the JSON of structuredContent: `{ data, meta }` as the HTTP route answers, or the error body `{ error, message, … }` with `isError: true`. */
                        result?: {
                            [key: string]: unknown;
                        };
                        error?: {
                            /** @description JSON-RPC error code, e.g. -32602 for an unknown tool. */
                            code: number;
                            message: string;
                            data?: unknown;
                        };
                    } | {
                        /** @enum {string} */
                        jsonrpc: "2.0";
                        id: string | number | null;
                        /** @description tools/call: `{ content: [{ type: "text", text }], structuredContent, isError? }`; the text is the JSON of structuredContent: `{ data, meta }` as the HTTP route answers, or the error body `{ error, message, … }` with `isError: true`. */
                        result?: {
                            [key: string]: unknown;
                        };
                        error?: {
                            /** @description JSON-RPC error code, e.g. -32602 for an unknown tool. */
                            code: number;
                            message: string;
                            data?: unknown;
                        };
                    }[];
                };
            };
            /** @description Accepted: the message held only notifications; no body. */
            202: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["TierForbidden"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    agentWalletRisk: {
        parameters: {
            query?: {
                /**
                 * @description The health factor to bring positions back to (default 1.25; 1 < x <= 10).
                 * @example 1.5
                 */
                targetHealthFactor?: number;
                /**
                 * @description Comma-separated chain ids, e.g. `1,8453`. Filtered to the tier's chains; omitted, the scope is the tier's chains.
                 * @example 1,8453
                 */
                chainIds?: components["parameters"]["chainIds"];
            };
            header?: never;
            path: {
                /**
                 * @description Wallet address.
                 * @example 0x7f39c581f595b53c5cb19bd0b3f8da6c935e2ca0
                 */
                address: components["parameters"]["address-3"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["WalletRisk"];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["TierForbidden"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    analyticsOverview: {
        parameters: {
            query?: {
                /** @description Only markets of this protocol. */
                protocol?: components["parameters"]["protocol"];
                /**
                 * @description Comma-separated chain ids, e.g. `1,8453`. Filtered to the tier's chains; omitted, the scope is the tier's chains.
                 * @example 1,8453
                 */
                chainIds?: components["parameters"]["chainIds"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Overview"];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["TierForbidden"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    analyticsTimeseries: {
        parameters: {
            query?: {
                /** @description One point per day and protocol (default), or per day and chain. */
                groupBy?: "protocol" | "chain";
                /** @description Only markets of this protocol. */
                protocol?: components["parameters"]["protocol"];
                /**
                 * @description Comma-separated chain ids, e.g. `1,8453`. Filtered to the tier's chains; omitted, the scope is the tier's chains.
                 * @example 1,8453
                 */
                chainIds?: components["parameters"]["chainIds"];
                /**
                 * @description ISO 8601 date or date-time (UTC). Raised to the start of the tier's history window.
                 * @example 2026-11-01
                 */
                startDate?: components["parameters"]["startDate"];
                /**
                 * @description ISO 8601 date or date-time (UTC when no offset): items up to this instant; a date includes its whole day. Before startDate: 400.
                 * @example 2026-11-20
                 */
                endDate?: components["parameters"]["endDate"];
                /**
                 * @description Maximum results (default 50). Values above min(10000, the tier's result cap) are lowered silently and reported in meta.clamped.
                 * @example 50
                 */
                limit?: components["parameters"]["limit-3"];
                /** @description Opaque cursor from `meta.nextCursor` of the previous page (the other parameters unchanged). */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["TimeseriesPoint"][];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["TierForbidden"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listApiKeys: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Your account's API keys. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            /** @example key_3kTMd9WQx1nB7cVz2LpA */
                            id: string;
                            /**
                             * @description First 14 characters of the key.
                             * @example lrds_live_AbCd
                             */
                            prefix: string;
                            /** @enum {string} */
                            mode: "live" | "test";
                            /** @example pro */
                            tier: string;
                            name: string | null;
                            /** @description ISO 8601 UTC. */
                            createdAt: string;
                            /** @description ISO 8601 UTC; null while active. */
                            revokedAt: string | null;
                        }[];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createApiKey: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description Makes retries safe: 1 to 255 visible ASCII characters, unique per request (a UUID v4), kept 24 hours.
                 * @example 7f9c1b2e-4d3a-4f7e-9a51-0c2b8e6d4a13
                 */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description A label for the key. */
                    name?: string;
                    /**
                     * @description Default: the calling key's mode.
                     * @enum {string}
                     */
                    mode?: "live" | "test";
                };
            };
        };
        responses: {
            /** @description The key created, or the first answer again when an Idempotency-Key is replayed. */
            201: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            id: string;
                            /** @description The whole key. Store it now: it is never shown again. */
                            key: string;
                            prefix: string;
                            mode: string;
                            tier: string;
                            name: string | null;
                            createdAt: string;
                        };
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["KeyLimitReached"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            409: components["responses"]["IdempotencyKeyInUse"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["IdempotencyKeyReused"];
            429: components["responses"]["KeyCreationRateExceededOrRateLimitExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    revokeApiKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description Id of the key to revoke.
                 * @example key_3kTMd9WQx1nB7cVz2LpA
                 */
                keyId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Revoke an API key. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            /** @example key_3kTMd9WQx1nB7cVz2LpA */
                            id: string;
                            /**
                             * @description First 14 characters of the key.
                             * @example lrds_live_AbCd
                             */
                            prefix: string;
                            /** @enum {string} */
                            mode: "live" | "test";
                            /** @example pro */
                            tier: string;
                            name: string | null;
                            /** @description ISO 8601 UTC. */
                            createdAt: string;
                            /** @description ISO 8601 UTC; null while active. */
                            revokedAt: string | null;
                        };
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["KeyNotFound"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getProfile: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Your account and the calling key. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            account: {
                                id: string;
                                name: string;
                                email: string | null;
                                createdAt: string;
                            };
                            key: {
                                /** @example key_3kTMd9WQx1nB7cVz2LpA */
                                id: string;
                                /**
                                 * @description First 14 characters of the key.
                                 * @example lrds_live_AbCd
                                 */
                                prefix: string;
                                /** @enum {string} */
                                mode: "live" | "test";
                                /** @example pro */
                                tier: string;
                                name: string | null;
                                /** @description ISO 8601 UTC. */
                                createdAt: string;
                                /** @description ISO 8601 UTC; null while active. */
                                revokedAt: string | null;
                            };
                            tier: {
                                id: string;
                                name: string;
                            };
                        };
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getQuota: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Quota dashboard. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            tier: {
                                id: string;
                                name: string;
                            };
                            rateLimit: {
                                perSecond: number;
                                remaining: number;
                                /** @description Unix ms when the oldest request leaves the window. */
                                resetAt: number;
                            };
                            daily: {
                                /** @description null = unlimited. */
                                limit: number | null;
                                used: number;
                                /** @description null = unlimited. */
                                remaining: number | null;
                                /** @description ISO 8601 UTC instant when the counter restarts at 0. */
                                resetAt: string;
                            };
                            monthly: {
                                /** @description null = unlimited. */
                                limit: number | null;
                                used: number;
                                /** @description null = unlimited. */
                                remaining: number | null;
                                /** @description ISO 8601 UTC instant when the counter restarts at 0. */
                                resetAt: string;
                            };
                            /** @description null = no tier cap. */
                            resultCap: number | null;
                            categories: string[];
                            /** @description null = every chain. */
                            chains: number[] | null;
                            /** @description null = unlimited. */
                            historyDays: number | null;
                        };
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getUsage: {
        parameters: {
            query?: {
                /**
                 * @description ISO 8601 date or date-time (UTC). Raised to the start of the tier's history window.
                 * @example 2026-11-01
                 */
                startDate?: components["parameters"]["startDate"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Requests per UTC day and endpoint. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            /** @description UTC day, YYYY-MM-DD. */
                            date: string;
                            requests: number;
                            endpoints: {
                                endpoint: string;
                                requests: number;
                            }[];
                        }[];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listWebhooks: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Your account's webhooks. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            /** @example wh_4mQp8ZrT2vLx9KcB1nWd */
                            id: string;
                            /** @example https://hooks.example.com/lrds */
                            url: string;
                            events: ("position.health_factor_below" | "position.liquidated" | "oracle.stale" | "oracle.recovered")[];
                            /** @description Every filter given must match. Filters an event has nothing for do not narrow it (an oracle event has no wallet). */
                            filters: {
                                /** @description Only events on these chains. */
                                chainIds?: number[];
                                /** @description Only events about markets of these protocols (an oracle: one pricing such a market). */
                                protocols?: ("morpho" | "aave" | "spark" | "compound" | "euler" | "fluid")[];
                                /** @description Only events about these markets (uniqueKeys; an oracle: one pricing such a market). */
                                marketIds?: string[];
                                /** @description Only position events of these wallets. */
                                wallets?: string[];
                                /** @description position.health_factor_below fires when a health factor crosses below this (default 1.1), and again only after it was back above it by 1 % or more. */
                                healthFactorBelow?: number;
                            };
                            /** @description ISO 8601 UTC. */
                            createdAt: string;
                        }[];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @example https://hooks.example.com/lrds */
                    url: string;
                    events: ("position.health_factor_below" | "position.liquidated" | "oracle.stale" | "oracle.recovered")[];
                    /** @description Every filter given must match. Filters an event has nothing for do not narrow it (an oracle event has no wallet). */
                    filters?: {
                        /** @description Only events on these chains. */
                        chainIds?: number[];
                        /** @description Only events about markets of these protocols (an oracle: one pricing such a market). */
                        protocols?: ("morpho" | "aave" | "spark" | "compound" | "euler" | "fluid")[];
                        /** @description Only events about these markets (uniqueKeys; an oracle: one pricing such a market). */
                        marketIds?: string[];
                        /** @description Only position events of these wallets. */
                        wallets?: string[];
                        /** @description position.health_factor_below fires when a health factor crosses below this (default 1.1), and again only after it was back above it by 1 % or more. */
                        healthFactorBelow?: number;
                    };
                };
            };
        };
        responses: {
            /** @description Create a webhook. */
            201: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            /** @example wh_4mQp8ZrT2vLx9KcB1nWd */
                            id: string;
                            /** @example https://hooks.example.com/lrds */
                            url: string;
                            events: ("position.health_factor_below" | "position.liquidated" | "oracle.stale" | "oracle.recovered")[];
                            /** @description Every filter given must match. Filters an event has nothing for do not narrow it (an oracle event has no wallet). */
                            filters: {
                                /** @description Only events on these chains. */
                                chainIds?: number[];
                                /** @description Only events about markets of these protocols (an oracle: one pricing such a market). */
                                protocols?: ("morpho" | "aave" | "spark" | "compound" | "euler" | "fluid")[];
                                /** @description Only events about these markets (uniqueKeys; an oracle: one pricing such a market). */
                                marketIds?: string[];
                                /** @description Only position events of these wallets. */
                                wallets?: string[];
                                /** @description position.health_factor_below fires when a health factor crosses below this (default 1.1), and again only after it was back above it by 1 % or more. */
                                healthFactorBelow?: number;
                            };
                            /** @description ISO 8601 UTC. */
                            createdAt: string;
                            /** @description The signing secret (`whsec_…`). Store it now: it is never shown again. */
                            secret: string;
                        };
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["TierForbiddenOrWebhookLimitReached"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description Id of the webhook.
                 * @example wh_4mQp8ZrT2vLx9KcB1nWd
                 */
                webhookId: components["parameters"]["webhookId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One webhook. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            /** @example wh_4mQp8ZrT2vLx9KcB1nWd */
                            id: string;
                            /** @example https://hooks.example.com/lrds */
                            url: string;
                            events: ("position.health_factor_below" | "position.liquidated" | "oracle.stale" | "oracle.recovered")[];
                            /** @description Every filter given must match. Filters an event has nothing for do not narrow it (an oracle event has no wallet). */
                            filters: {
                                /** @description Only events on these chains. */
                                chainIds?: number[];
                                /** @description Only events about markets of these protocols (an oracle: one pricing such a market). */
                                protocols?: ("morpho" | "aave" | "spark" | "compound" | "euler" | "fluid")[];
                                /** @description Only events about these markets (uniqueKeys; an oracle: one pricing such a market). */
                                marketIds?: string[];
                                /** @description Only position events of these wallets. */
                                wallets?: string[];
                                /** @description position.health_factor_below fires when a health factor crosses below this (default 1.1), and again only after it was back above it by 1 % or more. */
                                healthFactorBelow?: number;
                            };
                            /** @description ISO 8601 UTC. */
                            createdAt: string;
                        };
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["WebhookNotFound"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description Id of the webhook.
                 * @example wh_4mQp8ZrT2vLx9KcB1nWd
                 */
                webhookId: components["parameters"]["webhookId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Delete a webhook. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            /** @example wh_4mQp8ZrT2vLx9KcB1nWd */
                            id: string;
                            /** @example https://hooks.example.com/lrds */
                            url: string;
                            events: ("position.health_factor_below" | "position.liquidated" | "oracle.stale" | "oracle.recovered")[];
                            /** @description Every filter given must match. Filters an event has nothing for do not narrow it (an oracle event has no wallet). */
                            filters: {
                                /** @description Only events on these chains. */
                                chainIds?: number[];
                                /** @description Only events about markets of these protocols (an oracle: one pricing such a market). */
                                protocols?: ("morpho" | "aave" | "spark" | "compound" | "euler" | "fluid")[];
                                /** @description Only events about these markets (uniqueKeys; an oracle: one pricing such a market). */
                                marketIds?: string[];
                                /** @description Only position events of these wallets. */
                                wallets?: string[];
                                /** @description position.health_factor_below fires when a health factor crosses below this (default 1.1), and again only after it was back above it by 1 % or more. */
                                healthFactorBelow?: number;
                            };
                            /** @description ISO 8601 UTC. */
                            createdAt: string;
                        };
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["WebhookNotFound"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listWebhookDeliveries: {
        parameters: {
            query?: {
                /** @description Deliveries per page (default 20, at most 100). */
                limit?: number;
                /** @description From `meta.nextCursor` of the previous page. */
                cursor?: string;
            };
            header?: never;
            path: {
                /**
                 * @description Id of the webhook.
                 * @example wh_4mQp8ZrT2vLx9KcB1nWd
                 */
                webhookId: components["parameters"]["webhookId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A webhook's deliveries. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            /** @example dlv_3f9a0c1d2e4b5a6978c0d1e2 */
                            id: string;
                            /** @example evt_8b1f0e2d3c4a5b6978d0e1f2 */
                            eventId: string;
                            /** @enum {string} */
                            eventType: "position.health_factor_below" | "position.liquidated" | "oracle.stale" | "oracle.recovered" | "ping";
                            /**
                             * @description pending: to be attempted (again); delivered: a 2xx came back; failed: given up after 24 hours.
                             * @enum {string}
                             */
                            status: "pending" | "delivered" | "failed";
                            /** @description Attempts made. */
                            attempts: number;
                            /** @description HTTP status of the last attempt; null when it got none (timeout, connection refused, URL refused). */
                            lastStatus: number | null;
                            /** @description Why the last attempt failed; null when it did not. */
                            lastError: string | null;
                            /** @description ISO 8601 UTC of the next attempt; null once delivered or failed. */
                            nextAttemptAt: string | null;
                            /** @description ISO 8601 UTC; null until delivered. */
                            deliveredAt: string | null;
                            /** @description ISO 8601 UTC: when the event was created. */
                            createdAt: string;
                        }[];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["WebhookNotFound"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    testWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description Id of the webhook.
                 * @example wh_4mQp8ZrT2vLx9KcB1nWd
                 */
                webhookId: components["parameters"]["webhookId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The ping is stored and on its way. */
            202: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            /** @example evt_8b1f0e2d3c4a5b6978d0 */
                            eventId: string;
                            /** @example dlv_3f9a0c1d2e4b5a6978c0d1e2 */
                            deliveryId: string;
                        };
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["WebhookNotFound"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    streamEvents: {
        parameters: {
            query?: {
                /** @description Comma-separated event types (default all: position.health_factor_below, position.liquidated, oracle.stale, oracle.recovered). */
                types?: string;
                /**
                 * @description Comma-separated chain ids, e.g. `1,8453`. Filtered to the tier's chains; omitted, the scope is the tier's chains.
                 * @example 1,8453
                 */
                chainIds?: components["parameters"]["chainIds"];
                /** @description Comma-separated protocols (morpho, aave, spark, compound, euler, fluid). */
                protocols?: string;
                /** @description Comma-separated market uniqueKeys (at most 100). */
                marketIds?: string;
                /** @description Comma-separated wallet addresses (at most 100). */
                wallets?: string;
                /** @description position.health_factor_below fires when a health factor crosses below this (default 1.1). */
                healthFactorBelow?: number;
            };
            header?: {
                /** @description The id of the last event received: replay what followed it. */
                "Last-Event-ID"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The stream (it does not end until the client disconnects). */
            200: {
                headers: {
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example id: evt_2f0c9a1b3d4e5f60718293a4
                     *     event: position.health_factor_below
                     *     data: {"id":"evt_2f0c9a1b3d4e5f60718293a4","type":"position.health_factor_below","createdAt":"2026-11-22T12:00:05.000Z","data":{…}}
                     */
                    "text/event-stream": string;
                };
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["TierForbidden"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["StreamLimitReachedOrRateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    health: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The state of the service and of each data source. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /**
                         * @description `degraded` while the store or the limiter is not `up`, an ingestion pass is overdue, a source of the sources file has never been read (its `lastRefresh` is null: nothing of it is served yet), or a chain is syncing (its source's `sync`: what is served of it is partial).
                         * @enum {string}
                         */
                        status: "ok" | "degraded";
                        version: string;
                        store: {
                            backend: string;
                            /**
                             * @description `degraded`: the store answers reads but refuses writes (a full disk, say): data and counted requests are served (counts wait in memory), requests that must write (creating or revoking a key) get 503 with Retry-After.
                             * @enum {string}
                             */
                            state: "up" | "degraded" | "down";
                            /** @description While writes fail: ISO 8601 UTC time of the first failure. */
                            writesFailingSince?: string;
                            /** @description While writes fail: the store's error, e.g. `database or disk is full`. */
                            writeError?: string;
                        };
                        limiter: {
                            backend: string;
                            state: string;
                        };
                        /** @description The datasets served, by key mode: live keys' (absent while no source of the sources file has been read yet: live keys then get empty answers) and test keys' sandbox once built. */
                        datasets: {
                            mode: string;
                            kind: string;
                            profile: string;
                            refreshedAt: string;
                            markets: number;
                            positions: number;
                        }[];
                        /** @description The ingestion pass of the sources file running in this process (the one that holds the ingestion lease), or null when none is. `overdue`: it has run longer than `expectedSeconds` (twice the interval between passes, at least 60 s), and `status` is `degraded`: a source that does not answer shows here while the pass still waits for it. */
                        ingestion: {
                            /** @description ISO 8601 UTC time the pass started. */
                            startedAt: string;
                            /** @description Seconds it has been running. */
                            runningSeconds: number;
                            /** @description Seconds a pass may take before it is overdue. */
                            expectedSeconds: number;
                            overdue: boolean;
                            /** @description Each source's part of the pass as it stands, those with something under way: a first sync shows here each protocol's walk over its history. */
                            sources: {
                                /** @example chain:1 */
                                source: string;
                                /** @description Contract reads answered in this pass so far (markets, accounts, prices). */
                                callsAnswered: number;
                                /** @description Its `eth_getLogs` walks over block ranges under way. */
                                logWalks: {
                                    /** @description The protocol whose logs it reads (`aave` for Aave v3 and Spark pools, `shared` for a pass's one read of every contract). */
                                    what: string;
                                    fromBlock: number;
                                    toBlock: number;
                                    /** @description The last block whose logs are read (fromBlock - 1 before the first answer). */
                                    reachedBlock: number;
                                    blocksDone: number;
                                    blocksTotal: number;
                                    /** @description Logs read so far. */
                                    logs: number;
                                    /** @description Seconds left at the pace so far; null before the first answer. */
                                    estimateSeconds: number | null;
                                }[];
                            }[];
                        } | null;
                        /** @description Every data source of the live store, as last recorded, and each source of the sources file no pass has recorded yet. */
                        sources: {
                            /** @description e.g. 'sandbox', 'chain:1', 'morpho-api'. */
                            id: string;
                            /** @description 'simulation', 'chain' or 'api'. */
                            kind: string;
                            chains: number[];
                            /** @description ISO 8601 UTC time of the last successful refresh; null before the first (the source has not been read yet: nothing of it is served, see `lastError`). */
                            lastRefresh: string | null;
                            /** @description Seconds since the last successful refresh. */
                            ageSeconds: number | null;
                            /** @description Last block read, by chain id (chain sources). */
                            lastBlock: {
                                [key: string]: number;
                            };
                            /** @description Blocks between the chain head seen by the last successful refresh and the last block read, by chain id (chain sources: the confirmations kept back, plus any backlog). */
                            lagBlocks: {
                                [key: string]: number;
                            };
                            /** @description Chain sources: each chain still syncing, pass by pass, each stored: logs read from `fromBlock` through `throughBlock`, the state at `toBlock`, accounts found, `estimateSeconds` at the pace so far (null before any block). Absent once synced. */
                            sync?: {
                                [key: string]: {
                                    fromBlock: number;
                                    throughBlock: number;
                                    toBlock: number;
                                    blocksDone: number;
                                    blocksTotal: number;
                                    accounts: number;
                                    startedAt: string;
                                    estimateSeconds: number | null;
                                };
                            };
                            consecutiveFailures: number;
                            /** @description Message of the last failed refresh (credentials removed); null after a success. */
                            lastError: string | null;
                            /** @description Whether the source is behind the live data now: false for the sandbox's simulation once real sources serve, and for a source no longer in the sources file (its last refresh older than the live data's). A source not in use counts in no answer's freshness. */
                            inUse: boolean;
                        }[];
                    };
                };
            };
            400: components["responses"]["InvalidParameter"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listLiquidations: {
        parameters: {
            query?: {
                /**
                 * @description ISO 8601 date or date-time (UTC). Raised to the start of the tier's history window.
                 * @example 2026-11-01
                 */
                startDate?: components["parameters"]["startDate"];
                /**
                 * @description ISO 8601 date or date-time (UTC when no offset): items up to this instant; a date includes its whole day. Before startDate: 400.
                 * @example 2026-11-20
                 */
                endDate?: components["parameters"]["endDate"];
                /** @description Only markets of this protocol. */
                protocol?: components["parameters"]["protocol"];
                /**
                 * @description Comma-separated chain ids, e.g. `1,8453`. Filtered to the tier's chains; omitted, the scope is the tier's chains.
                 * @example 1,8453
                 */
                chainIds?: components["parameters"]["chainIds"];
                /** @description Only this market (uniqueKey; a market no longer served keeps its liquidations). */
                marketId?: string;
                /**
                 * @description Only liquidations of this borrower.
                 * @example 0x7f39c581f595b53c5cb19bd0b3f8da6c935e2ca0
                 */
                borrower?: string;
                /**
                 * @description Only liquidations by this liquidator.
                 * @example 0x7f39c581f595b53c5cb19bd0b3f8da6c935e2ca0
                 */
                liquidator?: string;
                /** @description Only liquidations that repaid at least this much, USD (one whose repayment has no known USD value never matches). */
                minRepaidUsd?: number;
                /**
                 * @description Maximum results (default 50). Values above min(500000, the tier's result cap) are lowered silently and reported in meta.clamped.
                 * @example 50
                 */
                limit?: number;
                /** @description Opaque cursor from `meta.nextCursor` of the previous page (the other parameters unchanged). */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The liquidations and meta: a JSON envelope, or NDJSON lines (each liquidation, then `{"meta": …}`) when asked for. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Liquidation"][];
                        meta: components["schemas"]["Meta"];
                    };
                    "application/x-ndjson": string;
                };
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["TierForbidden"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listMarkets: {
        parameters: {
            query?: {
                /**
                 * @description Maximum results (default 50). Values above min(1000, the tier's result cap) are lowered silently and reported in meta.clamped.
                 * @example 50
                 */
                limit?: components["parameters"]["limit-2"];
                /**
                 * @description Markets to skip (default 0).
                 * @example 0
                 */
                offset?: number;
                /** @description Only markets of this protocol. */
                protocol?: components["parameters"]["protocol"];
                /**
                 * @description Comma-separated chain ids, e.g. `1,8453`. Filtered to the tier's chains; omitted, the scope is the tier's chains.
                 * @example 1,8453
                 */
                chainIds?: components["parameters"]["chainIds"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Market"][];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["TierForbidden"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    searchMarkets: {
        parameters: {
            query: {
                /**
                 * @description Search text, 1 to 100 characters after trimming, of at most 8 distinct whitespace-separated terms (a repeated term counts once; case is ignored). More terms: 400 INVALID_PARAMETER.
                 * @example wstETH/WETH
                 */
                query: string;
                /**
                 * @description Maximum results (default 50). Values above min(200, the tier's result cap) are lowered silently and reported in meta.clamped.
                 * @example 50
                 */
                limit?: components["parameters"]["limit"];
                /** @description Only markets of this protocol. */
                protocol?: components["parameters"]["protocol"];
                /**
                 * @description Comma-separated chain ids, e.g. `1,8453`. Filtered to the tier's chains; omitted, the scope is the tier's chains.
                 * @example 1,8453
                 */
                chainIds?: components["parameters"]["chainIds"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Market"][];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["TierForbidden"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getMarket: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description Market uniqueKey: `<protocol>-<chainId>-<identifier>`.
                 * @example morpho-1-0xb323495f7e4148be5643a4ea4a8221eef163e4bccfdedc2a6f4696baacbc86cc
                 */
                marketId: components["parameters"]["marketId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Market"];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ChainForbiddenOrTierForbidden"];
            404: components["responses"]["MarketNotFound"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getMarketHistory: {
        parameters: {
            query?: {
                /** @description Point spacing (default day). */
                interval?: "day" | "hour";
                /**
                 * @description ISO 8601 date or date-time (UTC). Raised to the start of the tier's history window.
                 * @example 2026-11-01
                 */
                startDate?: components["parameters"]["startDate"];
                /**
                 * @description ISO 8601 date or date-time (UTC when no offset): items up to this instant; a date includes its whole day. Before startDate: 400.
                 * @example 2026-11-20
                 */
                endDate?: components["parameters"]["endDate"];
                /**
                 * @description Maximum results (default 50). Values above min(1000, the tier's result cap) are lowered silently and reported in meta.clamped.
                 * @example 50
                 */
                limit?: components["parameters"]["limit-2"];
                /** @description Opaque cursor from `meta.nextCursor` of the previous page (the other parameters unchanged). */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path: {
                /**
                 * @description Market uniqueKey: `<protocol>-<chainId>-<identifier>`.
                 * @example morpho-1-0xb323495f7e4148be5643a4ea4a8221eef163e4bccfdedc2a6f4696baacbc86cc
                 */
                marketId: components["parameters"]["marketId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["MarketHistoryPoint"][];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ChainForbiddenOrTierForbidden"];
            404: components["responses"]["MarketNotFound"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listOracles: {
        parameters: {
            query?: {
                /**
                 * @description Comma-separated chain ids, e.g. `1,8453`. Filtered to the tier's chains; omitted, the scope is the tier's chains.
                 * @example 1,8453
                 */
                chainIds?: components["parameters"]["chainIds"];
                /** @description Only this provider. */
                provider?: "Chainlink" | "Redstone" | "Pyth" | "Chronicle" | "API3" | "Pendle" | "Uniswap" | "Unknown";
                /** @description Only this oracle type. */
                type?: "ChainlinkOracle" | "ChainlinkOracleV2" | "RedstoneOracle" | "PythOracle" | "ChronicleOracle" | "Api3Oracle" | "PendlePtOracle" | "ExchangeRateOracle" | "Custom";
                /** @description true: only stale oracles (a feed past its heartbeat); false: only fresh ones. */
                stale?: boolean;
                /**
                 * @description Maximum results (default 50). Values above min(1000, the tier's result cap) are lowered silently and reported in meta.clamped.
                 * @example 50
                 */
                limit?: components["parameters"]["limit-2"];
                /** @description Opaque cursor from `meta.nextCursor` of the previous page (the other parameters unchanged). */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Oracle"][];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["TierForbidden"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getOracle: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description Chain id, e.g. 1 (Ethereum). A chain outside your tier: 403 CHAIN_FORBIDDEN.
                 * @example 1
                 */
                chainId: components["parameters"]["chainId"];
                /**
                 * @description Oracle contract address.
                 * @example 0x7f39c581f595b53c5cb19bd0b3f8da6c935e2ca0
                 */
                address: components["parameters"]["address"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["OracleDetail"];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ChainForbiddenOrTierForbidden"];
            404: components["responses"]["OracleNotFound"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getOracleRounds: {
        parameters: {
            query?: {
                /**
                 * @description Only this feed of the oracle.
                 * @example 0x7f39c581f595b53c5cb19bd0b3f8da6c935e2ca0
                 */
                feed?: string;
                /**
                 * @description ISO 8601 date or date-time (UTC). Raised to the start of the tier's history window.
                 * @example 2026-11-01
                 */
                startDate?: components["parameters"]["startDate"];
                /**
                 * @description ISO 8601 date or date-time (UTC when no offset): items up to this instant; a date includes its whole day. Before startDate: 400.
                 * @example 2026-11-20
                 */
                endDate?: components["parameters"]["endDate"];
                /**
                 * @description Maximum results (default 50). Values above min(10000, the tier's result cap) are lowered silently and reported in meta.clamped.
                 * @example 50
                 */
                limit?: components["parameters"]["limit-3"];
                /** @description Opaque cursor from `meta.nextCursor` of the previous page (the other parameters unchanged). */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path: {
                /**
                 * @description Chain id, e.g. 1 (Ethereum). A chain outside your tier: 403 CHAIN_FORBIDDEN.
                 * @example 1
                 */
                chainId: components["parameters"]["chainId"];
                /**
                 * @description Oracle contract address.
                 * @example 0x7f39c581f595b53c5cb19bd0b3f8da6c935e2ca0
                 */
                address: components["parameters"]["address"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["OracleRound"][];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ChainForbiddenOrTierForbidden"];
            404: components["responses"]["OracleNotFound"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getPortfolio: {
        parameters: {
            query?: {
                /**
                 * @description Comma-separated chain ids, e.g. `1,8453`. Filtered to the tier's chains; omitted, the scope is the tier's chains.
                 * @example 1,8453
                 */
                chainIds?: components["parameters"]["chainIds"];
            };
            header?: never;
            path: {
                /**
                 * @description Wallet address.
                 * @example 0x7f39c581f595b53c5cb19bd0b3f8da6c935e2ca0
                 */
                address: components["parameters"]["address-3"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Portfolio"];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["TierForbidden"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listPositions: {
        parameters: {
            query: {
                /**
                 * @description Wallet address.
                 * @example 0x7f39c581f595b53c5cb19bd0b3f8da6c935e2ca0
                 */
                address: string;
                /**
                 * @description A token: `liquidationPrice` is then this asset's price at which each position reaches health factor 1 (its collateral's or its debt's, all else fixed; null for positions that do not hold it).
                 * @example 0x7f39c581f595b53c5cb19bd0b3f8da6c935e2ca0
                 */
                asset?: string;
                /** @description Only markets of this protocol. */
                protocol?: components["parameters"]["protocol"];
                /**
                 * @description Comma-separated chain ids, e.g. `1,8453`. Filtered to the tier's chains; omitted, the scope is the tier's chains.
                 * @example 1,8453
                 */
                chainIds?: components["parameters"]["chainIds"];
                /**
                 * @description Maximum results (default 50). Values above min(500, the tier's result cap) are lowered silently and reported in meta.clamped.
                 * @example 50
                 */
                limit?: components["parameters"]["limit-4"];
                /** @description Opaque cursor from `meta.nextCursor` of the previous page (the other parameters unchanged). */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Position"][];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["TierForbidden"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listMarketRatings: {
        parameters: {
            query?: {
                /** @description Only markets of this protocol. */
                protocol?: components["parameters"]["protocol"];
                /**
                 * @description Comma-separated chain ids, e.g. `1,8453`. Filtered to the tier's chains; omitted, the scope is the tier's chains.
                 * @example 1,8453
                 */
                chainIds?: components["parameters"]["chainIds"];
                /**
                 * @description Only ratings scoring at least this (0 to 100).
                 * @example 70
                 */
                minScore?: components["parameters"]["minScore"];
                /** @description Only ratings of this grade (NR: those not graded). */
                grade?: components["parameters"]["grade"];
                /** @description By score: `desc` (default) best first, `asc` worst first; ties by id. Page with `cursor`. */
                order?: components["parameters"]["order"];
                /**
                 * @description Maximum results (default 50). Values above min(1000, the tier's result cap) are lowered silently and reported in meta.clamped.
                 * @example 50
                 */
                limit?: components["parameters"]["limit-2"];
                /** @description Opaque cursor from `meta.nextCursor` of the previous page (the other parameters unchanged). */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["MarketRating"][];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["TierForbidden"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getMarketRating: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description Market uniqueKey: `<protocol>-<chainId>-<identifier>`.
                 * @example morpho-1-0xb323495f7e4148be5643a4ea4a8221eef163e4bccfdedc2a6f4696baacbc86cc
                 */
                marketId: components["parameters"]["marketId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["MarketRating"];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ChainForbiddenOrTierForbidden"];
            404: components["responses"]["MarketNotFound"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getMarketRatingHistory: {
        parameters: {
            query?: {
                /**
                 * @description ISO 8601 date or date-time (UTC). Raised to the start of the tier's history window.
                 * @example 2026-11-01
                 */
                startDate?: components["parameters"]["startDate"];
                /**
                 * @description ISO 8601 date or date-time (UTC when no offset): items up to this instant; a date includes its whole day. Before startDate: 400.
                 * @example 2026-11-20
                 */
                endDate?: components["parameters"]["endDate"];
                /**
                 * @description Maximum results (default 50). Values above min(1000, the tier's result cap) are lowered silently and reported in meta.clamped.
                 * @example 50
                 */
                limit?: components["parameters"]["limit-2"];
                /** @description Opaque cursor from `meta.nextCursor` of the previous page (the other parameters unchanged). */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path: {
                /**
                 * @description Market uniqueKey: `<protocol>-<chainId>-<identifier>`.
                 * @example morpho-1-0xb323495f7e4148be5643a4ea4a8221eef163e4bccfdedc2a6f4696baacbc86cc
                 */
                marketId: components["parameters"]["marketId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["RatingChange"][];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ChainForbiddenOrTierForbidden"];
            404: components["responses"]["MarketNotFound"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getRatingMethodology: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["RatingMethodology"];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["TierForbidden"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listVaultRatings: {
        parameters: {
            query?: {
                /** @description Only this protocol. */
                protocol?: components["parameters"]["protocol-2"];
                /**
                 * @description Comma-separated chain ids, e.g. `1,8453`. Filtered to the tier's chains; omitted, the scope is the tier's chains.
                 * @example 1,8453
                 */
                chainIds?: components["parameters"]["chainIds"];
                /**
                 * @description Only vaults of this asset symbol (case-insensitive).
                 * @example USDC
                 */
                asset?: components["parameters"]["asset"];
                /**
                 * @description Only ratings scoring at least this (0 to 100).
                 * @example 70
                 */
                minScore?: components["parameters"]["minScore"];
                /** @description Only ratings of this grade (NR: those not graded). */
                grade?: components["parameters"]["grade"];
                /** @description By score: `desc` (default) best first, `asc` worst first; ties by id. Page with `cursor`. */
                order?: components["parameters"]["order"];
                /**
                 * @description Maximum results (default 50). Values above min(500, the tier's result cap) are lowered silently and reported in meta.clamped.
                 * @example 50
                 */
                limit?: components["parameters"]["limit-4"];
                /** @description Opaque cursor from `meta.nextCursor` of the previous page (the other parameters unchanged). */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["VaultRating"][];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["TierForbidden"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getVaultRating: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description Chain id, e.g. 1 (Ethereum). A chain outside your tier: 403 CHAIN_FORBIDDEN.
                 * @example 1
                 */
                chainId: components["parameters"]["chainId"];
                /**
                 * @description Vault contract address.
                 * @example 0x7f39c581f595b53c5cb19bd0b3f8da6c935e2ca0
                 */
                address: components["parameters"]["address-2"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["VaultRating"];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ChainForbiddenOrTierForbidden"];
            404: components["responses"]["VaultNotFound"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getVaultRatingHistory: {
        parameters: {
            query?: {
                /**
                 * @description ISO 8601 date or date-time (UTC). Raised to the start of the tier's history window.
                 * @example 2026-11-01
                 */
                startDate?: components["parameters"]["startDate"];
                /**
                 * @description ISO 8601 date or date-time (UTC when no offset): items up to this instant; a date includes its whole day. Before startDate: 400.
                 * @example 2026-11-20
                 */
                endDate?: components["parameters"]["endDate"];
                /**
                 * @description Maximum results (default 50). Values above min(1000, the tier's result cap) are lowered silently and reported in meta.clamped.
                 * @example 50
                 */
                limit?: components["parameters"]["limit-2"];
                /** @description Opaque cursor from `meta.nextCursor` of the previous page (the other parameters unchanged). */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path: {
                /**
                 * @description Chain id, e.g. 1 (Ethereum). A chain outside your tier: 403 CHAIN_FORBIDDEN.
                 * @example 1
                 */
                chainId: components["parameters"]["chainId"];
                /**
                 * @description Vault contract address.
                 * @example 0x7f39c581f595b53c5cb19bd0b3f8da6c935e2ca0
                 */
                address: components["parameters"]["address-2"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["RatingChange"][];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ChainForbiddenOrTierForbidden"];
            404: components["responses"]["VaultNotFound"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listResearchReports: {
        parameters: {
            query?: {
                /** @description Only markets of this protocol. */
                protocol?: components["parameters"]["protocol"];
                /**
                 * @description Comma-separated chain ids, e.g. `1,8453`. Filtered to the tier's chains; omitted, the scope is the tier's chains.
                 * @example 1,8453
                 */
                chainIds?: components["parameters"]["chainIds"];
                /**
                 * @description ISO 8601 date or date-time (UTC). Raised to the start of the tier's history window.
                 * @example 2026-11-01
                 */
                startDate?: components["parameters"]["startDate"];
                /**
                 * @description ISO 8601 date or date-time (UTC when no offset): items up to this instant; a date includes its whole day. Before startDate: 400.
                 * @example 2026-11-20
                 */
                endDate?: components["parameters"]["endDate"];
                /**
                 * @description Maximum results (default 50). Values above min(500, the tier's result cap) are lowered silently and reported in meta.clamped.
                 * @example 50
                 */
                limit?: components["parameters"]["limit-4"];
                /** @description Opaque cursor from `meta.nextCursor` of the previous page (the other parameters unchanged). */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["ResearchReportSummary"][];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["TierForbidden"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getResearchReport: {
        parameters: {
            query?: {
                /**
                 * @description Comma-separated chain ids, e.g. `1,8453`. Filtered to the tier's chains; omitted, the scope is the tier's chains.
                 * @example 1,8453
                 */
                chainIds?: components["parameters"]["chainIds"];
            };
            header?: never;
            path: {
                /**
                 * @description `<YYYY-MM-DD>-<protocol>`.
                 * @example 2026-11-24-morpho
                 */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["ResearchReport"];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["TierForbidden"];
            404: components["responses"]["ReportNotFound"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getMarketRisk: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description Market uniqueKey: `<protocol>-<chainId>-<identifier>`.
                 * @example morpho-1-0xb323495f7e4148be5643a4ea4a8221eef163e4bccfdedc2a6f4696baacbc86cc
                 */
                marketId: components["parameters"]["marketId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["MarketRisk"];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ChainForbiddenOrTierForbidden"];
            404: components["responses"]["MarketNotFound"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    positionsAtRisk: {
        parameters: {
            query?: {
                /**
                 * @description Positions with healthFactor below this value (default 1.1; 0 < x <= 10).
                 * @example 1.1
                 */
                healthFactorThreshold?: number;
                /** @description Only markets of this protocol. */
                protocol?: components["parameters"]["protocol"];
                /**
                 * @description Comma-separated chain ids, e.g. `1,8453`. Filtered to the tier's chains; omitted, the scope is the tier's chains.
                 * @example 1,8453
                 */
                chainIds?: components["parameters"]["chainIds"];
                /** @description Only positions in this market (uniqueKey). */
                marketId?: string;
                /**
                 * @description Minimum borrowed USD (default 0).
                 * @example 10000
                 */
                minBorrowUsd?: number;
                /**
                 * @description Maximum results (default 50). Values above min(200, the tier's result cap) are lowered silently and reported in meta.clamped.
                 * @example 50
                 */
                limit?: components["parameters"]["limit"];
                /** @description Opaque cursor from `meta.nextCursor` of the previous page (the other parameters unchanged). */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["PositionAtRisk"][];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["TierForbidden"];
            404: components["responses"]["MarketNotFound"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    stressTest: {
        parameters: {
            query: {
                /**
                 * @description Up to 10 comma-separated `SYMBOL:change` pairs, change relative (-0.2 = a 20 % fall; above -1, at most 10). Symbols match case-insensitively; ETH and BTC name the groups.
                 * @example WETH:-0.2,WBTC:-0.15
                 */
                shocks: string;
                /** @description Only markets of this protocol. */
                protocol?: components["parameters"]["protocol"];
                /**
                 * @description Comma-separated chain ids, e.g. `1,8453`. Filtered to the tier's chains; omitted, the scope is the tier's chains.
                 * @example 1,8453
                 */
                chainIds?: components["parameters"]["chainIds"];
                /**
                 * @description Maximum results (default 50). Values above min(1000, the tier's result cap) are lowered silently and reported in meta.clamped.
                 * @example 50
                 */
                limit?: components["parameters"]["limit-2"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Stress"];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["TierForbidden"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listTokens: {
        parameters: {
            query?: {
                /**
                 * @description Comma-separated chain ids, e.g. `1,8453`. Filtered to the tier's chains; omitted, the scope is the tier's chains.
                 * @example 1,8453
                 */
                chainIds?: components["parameters"]["chainIds"];
                /**
                 * @description Only tokens with this symbol (case-insensitive).
                 * @example USDC
                 */
                symbol?: string;
                /**
                 * @description Maximum results (default 50). Values above min(1000, the tier's result cap) are lowered silently and reported in meta.clamped.
                 * @example 50
                 */
                limit?: components["parameters"]["limit-2"];
                /** @description Opaque cursor from `meta.nextCursor` of the previous page (the other parameters unchanged). */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Token"][];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["TierForbidden"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getToken: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description Chain id, e.g. 1 (Ethereum). A chain outside your tier: 403 CHAIN_FORBIDDEN.
                 * @example 1
                 */
                chainId: components["parameters"]["chainId"];
                /**
                 * @description Token contract address.
                 * @example 0x7f39c581f595b53c5cb19bd0b3f8da6c935e2ca0
                 */
                address: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["TokenDetail"];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ChainForbiddenOrTierForbidden"];
            404: components["responses"]["TokenNotFound"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listVaults: {
        parameters: {
            query?: {
                /** @description Only this protocol. */
                protocol?: components["parameters"]["protocol-2"];
                /**
                 * @description Comma-separated chain ids, e.g. `1,8453`. Filtered to the tier's chains; omitted, the scope is the tier's chains.
                 * @example 1,8453
                 */
                chainIds?: components["parameters"]["chainIds"];
                /**
                 * @description Only vaults of this asset symbol (case-insensitive).
                 * @example USDC
                 */
                asset?: components["parameters"]["asset"];
                /**
                 * @description Maximum results (default 50). Values above min(500, the tier's result cap) are lowered silently and reported in meta.clamped.
                 * @example 50
                 */
                limit?: components["parameters"]["limit-4"];
                /** @description Opaque cursor from `meta.nextCursor` of the previous page (the other parameters unchanged). */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Vault"][];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["TierForbidden"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getVault: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description Chain id, e.g. 1 (Ethereum). A chain outside your tier: 403 CHAIN_FORBIDDEN.
                 * @example 1
                 */
                chainId: components["parameters"]["chainId"];
                /**
                 * @description Vault contract address.
                 * @example 0x7f39c581f595b53c5cb19bd0b3f8da6c935e2ca0
                 */
                address: components["parameters"]["address-2"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The data, and meta: how fresh it is, where it comes from, what was clamped. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Vault"];
                        meta: components["schemas"]["Meta"];
                    };
                };
            };
            /** @description Not Modified: the data is unchanged since the ETag sent in If-None-Match; no body. Counted like any request. */
            304: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    ETag: components["headers"]["ETag"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["InvalidParameter"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["ChainForbiddenOrTierForbidden"];
            404: components["responses"]["VaultNotFound"];
            405: components["responses"]["MethodNotAllowed"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["RateLimitExceededOrDailyQuotaExceededOrMonthlyQuotaExceeded"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
}
