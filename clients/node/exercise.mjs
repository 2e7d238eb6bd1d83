// Every tool once through the MCP TypeScript SDK's client (Claude Code's), over stdio:
// argv = the server command. The client checks each structured result against the tool's output schema
// (Ajv) and throws when one does not match. Prints one JSON line: the tools as listed and every call's result.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "ignore" });
const client = new Client({ name: "stroidok-tests", version: "1.0.0" });
await client.connect(transport);
const call = (name, args) => client.callTool({ name, arguments: args });
const { tools } = await client.listTools();
const search = await call("search_documents", { query: "монтажный стык", limit: 2 });
const outcome = {
  tools,
  search,
  bad: await call("search_documents", { query: "", limit: 500 }),
  document: await call("get_document", { id: search.structuredContent.results[0].id }),
  missing: await call("get_document", { id: "0".repeat(20) }),
  sources: await call("list_sources", {}),
  citations: await call("check_citations", { text: "По ГОСТ 10180-2012, п. 4.1: 28 суток; табл. 2 СП 999.13330.2020" }),
  byDesignation: await call("get_document", { designation: "ГОСТ 10180-2012", clause: "п. 4.1" }),
  page: await call("get_page_image", { id: search.structuredContent.results[0].id, page: 1 }),
};
process.stdout.write(JSON.stringify(outcome) + "\n");
await client.close();
