import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { TestApp } from '../helpers.ts';
import { conformanceChecker } from '../openapi-conformance.ts';

/**
 * The MCP server driven as agents drive it: the SDK's own client over a real socket. Every answer
 * the client receives is checked against the served OpenAPI document, as createTestApp checks
 * injected ones (an undocumented status, header or body is a problem `served` reports).
 */
export interface Served {
  url: URL;
  /** What the answers received so far broke of the document (none expected). */
  problems: string[];
  connect(key: string): Promise<Client>;
}

export async function serve(t: TestApp): Promise<Served> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = t.app.server.address() as AddressInfo;
  const url = new URL(`http://127.0.0.1:${port}/api/v1/agent/mcp`);
  const check = conformanceChecker(JSON.parse(JSON.stringify(t.app.swagger())));
  const problems: string[] = [];
  const checkedFetch = async (input: string | URL, init?: RequestInit): Promise<Response> => {
    const res = await fetch(input, init);
    const headers: Record<string, string> = Object.fromEntries(res.headers);
    // fetch has decoded a compressed body already
    delete headers['content-encoding'];
    problems.push(
      ...check({
        method: init?.method ?? 'GET',
        url: new URL(String(input)).pathname,
        statusCode: res.status,
        headers,
        rawPayload: Buffer.from(await res.clone().arrayBuffer()),
      }),
    );
    return res;
  };
  return {
    url,
    problems,
    async connect(key) {
      const client = new Client({ name: 'lrds-test-agent', version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(url, {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
        fetch: checkedFetch,
      });
      await client.connect(transport);
      return client;
    },
  };
}

/** A tool call's result, asserting the text content is the JSON of the structured content. */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<{ isError: boolean; body: Record<string, unknown> }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const [content] = result.content;
  assert.equal(result.content.length, 1);
  assert.equal(content?.type, 'text');
  const body = result.structuredContent as Record<string, unknown>;
  assert.deepEqual(JSON.parse((content as { text: string }).text), body);
  return { isError: result.isError === true, body };
}

/** Meta without latencyMs, the one field that is each request's own. */
export function metaOf(body: Record<string, unknown>): Record<string, unknown> {
  const { latencyMs, ...meta } = body.meta as Record<string, unknown>;
  assert.equal(typeof latencyMs, 'number');
  return meta;
}
