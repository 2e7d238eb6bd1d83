// One MCP stdio session through the TypeScript SDK's client (Claude Code's), driven line by line:
// argv = the server command; stdin: one JSON {"query": ...} per line; stdout: one JSON line per call,
// {"ms": wall time of callTool, "timings": the result's meta.timings}. The first line out is
// {"ready": true}, after the tool list and one warm-up call.
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "ignore" });
const client = new Client({ name: "stroidok-bench", version: "1.0.0" });
await client.connect(transport);
await client.listTools();
await client.callTool({ name: "search_documents", arguments: { query: "прогрев" } });
process.stdout.write(JSON.stringify({ ready: true }) + "\n");
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const { query } = JSON.parse(line);
  const began = performance.now();
  const result = await client.callTool({ name: "search_documents", arguments: { query } });
  const ms = performance.now() - began;
  const timings = result.structuredContent?.meta?.timings ?? null;
  process.stdout.write(JSON.stringify({ ms, timings, error: result.isError ?? false }) + "\n");
}
await client.close();
