// N MCP sessions over streamable HTTP through the TypeScript SDK's client (Claude Code's), for
// benchmarks/concurrency.py: argv = url, clients, requests; stdin: a JSON array of questions, then "go".
// Each session connects, lists the tools and makes one call (the SDK compiles the output-schema validator
// then); the first line out is {"ready": true}. After "go", all sessions call search_documents with the
// tool's defaults until `requests` calls are done in all; the last line out is
// {latencies, inside, errors, wall_s, cpu_s}: wall ms per call, the server's own total_ms per call, the
// failed calls, the wall time and this process's CPU over the timed calls.
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, clientsArg, requestsArg] = process.argv.slice(2);
const clients = Number(clientsArg);
const requests = Number(requestsArg);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const questions = JSON.parse((await lines.next()).value);
const search = (client, query) => client.callTool({ name: "search_documents", arguments: { query } });

const sessions = await Promise.all(Array.from({ length: clients }, async () => {
  const client = new Client({ name: "stroidok-bench", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  await client.listTools();
  await search(client, questions[0]);
  return client;
}));
process.stdout.write(JSON.stringify({ ready: true }) + "\n");
await lines.next(); // "go"

const run = { latencies: [], inside: [], errors: 0 };
let next = 0;
const cpu = process.cpuUsage();
const began = performance.now();
await Promise.all(sessions.map(async (client) => {
  while (next < requests) {
    const i = next++;
    const start = performance.now();
    try {
      const result = await search(client, questions[i % questions.length]);
      if (result.isError) { run.errors++; continue; }
      run.latencies.push(performance.now() - start);
      run.inside.push(result.structuredContent?.meta?.timings?.total_ms ?? 0);
    } catch {
      run.errors++;
    }
  }
}));
const used = process.cpuUsage(cpu);
run.wall_s = (performance.now() - began) / 1000;
run.cpu_s = (used.user + used.system) / 1e6;
process.stdout.write(JSON.stringify(run) + "\n");
await Promise.all(sessions.map((client) => client.close()));
