// The official TypeScript SDK v2's skills server over a folder, on plain node:http (bench.peers' "ts-sdk" peer).
//
//     node bench/peer_servers/ts_sdk_skills.mjs ROOT HOST PORT
//
// `loadSkills(ROOT)` (@modelcontextprotocol/server/ext/skills/node) builds the catalog; `createMcpHandler` serves a
// fresh McpServer per request with the catalog attached (the SDK's stateless entry; JSON responses, as skillwire
// and the bare SDK floor answer), wrapped for node:http by @modelcontextprotocol/node's `toNodeHandler`. Any path
// but /mcp is 404. Installed by bench.peers into .cache/peers/ts-sdk from the npm registry.
import http from "node:http";
import { McpServer, createMcpHandler } from "@modelcontextprotocol/server";
import { loadSkills } from "@modelcontextprotocol/server/ext/skills/node";
import { toNodeHandler } from "@modelcontextprotocol/node";

const [root, host, port] = process.argv.slice(2);
const skills = await loadSkills(root, { onWarning: () => {} });
const handler = createMcpHandler(
  () => {
    const mcp = new McpServer({ name: "ts-sdk-skills", version: "0" });
    skills.attach(mcp);
    return mcp;
  },
  { responseMode: "json" },
);
const serve = toNodeHandler(handler);
const server = http.createServer((req, res) => {
  if (new URL(req.url ?? "/", "http://x").pathname !== "/mcp") {
    res.writeHead(404).end();
    return;
  }
  serve(req, res);
});
server.keepAliveTimeout = 60_000;
server.listen(Number(port), host);
