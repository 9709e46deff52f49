// The TypeScript SDK v2's plain `Client` (@modelcontextprotocol/client) using `skillwire serve --tools` as a client
// without the Skills extension would: through tools alone, for the interop tests (tests/interop/test_tools_clients.py).
//
//   node skills-tools-interop.mjs '{"transport": "http", "url": "http://127.0.0.1:PORT/mcp", "era": "modern",
//                                   "token": "optional bearer token"}'
//   node skills-tools-interop.mjs '{"transport": "stdio", "command": "python", "args": [...], "era": "legacy"}'
//
// One connection: tools/list, then list_skills page by page (cursor), read_skill for every skill listed, and
// read_skill_file for every file in each skill's manifest; each file is also read with resources/read and the two
// must give the same bytes (text as text, anything else as a base64 blob with the same media type). The SDK checks
// every structuredContent against the tool's outputSchema. Prints one JSON object on stdout:
//   {client, protocolVersion, era, tools: [name], skills: [uri], files: {uri: sha256 hex of read_skill_file's bytes},
//    binary: [uri], failures: [{step, uri, error}]}
// and exits 0 whether or not there were failures (the test asserts on them); 2 when it cannot connect at all.
import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/client';
import { clientPackage, connected, describe, versionNegotiation } from './interop-common.mjs';

const config = JSON.parse(process.argv[2]);

function bytesOf(contents) {
  return typeof contents.text === 'string' ? Buffer.from(contents.text, 'utf8') : Buffer.from(contents.blob, 'base64');
}

async function call(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name} answered isError: ${result.content?.[0]?.text}`);
  return result;
}

async function main() {
  const client = new Client({ name: 'skillwire-tools-interop', version: '0' }, { versionNegotiation: versionNegotiation(config.era) });
  const summary = {
    client: `@modelcontextprotocol/client ${clientPackage.version} Client (tools)`,
    protocolVersion: null,
    era: null,
    tools: [],
    skills: [],
    files: {},
    binary: [],
    failures: [],
  };
  if (!(await connected(client, config, summary))) return;
  summary.era = client.getProtocolEra() ?? null;
  try {
    summary.tools = (await client.listTools()).tools.map((tool) => tool.name).sort();
    let cursor;
    for (let page = 0; page < 1000; page += 1) {
      const listed = (await call(client, 'list_skills', cursor === undefined ? {} : { cursor })).structuredContent;
      for (const skill of listed.skills) summary.skills.push(skill.uri);
      cursor = listed.nextCursor;
      if (cursor === undefined) break;
    }
    for (const uri of summary.skills) {
      let skill;
      try {
        const read = await call(client, 'read_skill', { uri });
        skill = read.structuredContent;
        const asResource = (await client.readResource({ uri })).contents[0];
        if (read.content[0]?.text !== skill.text || skill.text !== asResource.text) {
          summary.failures.push({ step: 'read_skill', uri, error: 'SKILL.md text differs from resources/read' });
        }
      } catch (error) {
        summary.failures.push({ step: 'read_skill', uri, error: describe(error) });
        continue;
      }
      for (const file of skill.files) {
        try {
          const block = (await call(client, 'read_skill_file', { uri: file.uri })).content[0];
          const asResource = (await client.readResource({ uri: file.uri })).contents[0];
          let bytes;
          if (block.type === 'text') {
            bytes = Buffer.from(block.text, 'utf8');
            if (block.text !== asResource.text) throw new Error('text differs from resources/read');
          } else if (block.type === 'resource' && typeof block.resource.blob === 'string') {
            bytes = Buffer.from(block.resource.blob, 'base64');
            summary.binary.push(file.uri);
            if (block.resource.mimeType !== asResource.mimeType) throw new Error('media type differs from resources/read');
          } else {
            throw new Error(`unexpected content ${JSON.stringify(block).slice(0, 200)}`);
          }
          if (!bytes.equals(bytesOf(asResource))) throw new Error('bytes differ from resources/read');
          const digest = createHash('sha256').update(bytes).digest('hex');
          if (`sha256:${digest}` !== file.digest || bytes.length !== file.size) {
            throw new Error("bytes differ from read_skill's manifest entry");
          }
          summary.files[file.uri] = digest;
        } catch (error) {
          summary.failures.push({ step: 'read_skill_file', uri: file.uri, error: describe(error) });
        }
      }
    }
  } catch (error) {
    summary.failures.push({ step: 'list_skills', error: describe(error) });
  } finally {
    await client.close().catch(() => {});
  }
  process.stdout.write(JSON.stringify(summary));
}

await main();
