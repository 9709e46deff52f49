// The TypeScript SDK v2's SkillsClient (@modelcontextprotocol/client, `ext/skills`) against a Skills server,
// for the interop tests (tests/interop/test_typescript_sdk.py).
//
//   node skills-client-interop.mjs '{"transport": "http", "url": "http://127.0.0.1:PORT/mcp", "era": "modern"}'
//   node skills-client-interop.mjs '{"transport": "stdio", "command": "python", "args": [...], "era": "legacy"}'
//
// era "legacy" is the 2025-11-25 `initialize` handshake, "modern" the 2026-07-28 stateless era (pinned: no
// fallback). One connection: `list()` (every page), then for every skill `get()` of its URI, `read()` of every
// file in its manifest (the SDK checks size, digest and, for SKILL.md, frontmatter), and `readDirectory()` from
// the skill's folder down through every sub-folder. Prints one JSON object on stdout:
//   {client, protocolVersion, era, skills: [uri], files: {uri: sha256 hex of the bytes read}, verified: n,
//    directoryFiles: [uri], failures: [{step, uri, error}]}
// and exits 0 whether or not there were failures (the test asserts on them); 2 when it cannot connect at all.
import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/client';
import { DIRECTORY_MIME_TYPE, SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { clientPackage, connected, describe, versionNegotiation } from './interop-common.mjs';

const config = JSON.parse(process.argv[2]);

async function walkDirectory(skills, uri, found, failures, depth = 0) {
  let listing;
  try {
    listing = await skills.readDirectory(uri);
  } catch (error) {
    failures.push({ step: 'readDirectory', uri, error: describe(error) });
    return;
  }
  for (const entry of listing.resources) {
    if (entry.mimeType === DIRECTORY_MIME_TYPE) {
      if (depth < 16) await walkDirectory(skills, entry.uri, found, failures, depth + 1);
    } else {
      found.add(entry.uri);
    }
  }
}

async function main() {
  const client = new Client({ name: 'skillwire-interop', version: '0' }, { versionNegotiation: versionNegotiation(config.era) });
  const summary = {
    client: `@modelcontextprotocol/client ${clientPackage.version} SkillsClient`,
    protocolVersion: null,
    era: null,
    skills: [],
    files: {},
    verified: 0,
    directoryFiles: [],
    failures: [],
  };
  if (!(await connected(client, config, summary))) return;
  summary.era = client.getProtocolEra() ?? null;
  const skills = new SkillsClient(client);
  const directoryFiles = new Set();
  try {
    if (!skills.supported) summary.failures.push({ step: 'supported', error: 'the server does not declare skills' });
    const listing = await skills.list();
    for (const invalid of listing.invalid) summary.failures.push({ step: 'list', uri: invalid.uri, error: invalid.reason });
    for (const entry of listing.skills) {
      summary.skills.push(entry.uri);
      let skill = entry;
      try {
        ({ skill } = await skills.get(entry.uri));
        if (JSON.stringify(skill.resources) !== JSON.stringify(entry.resources)) {
          summary.failures.push({ step: 'get', uri: entry.uri, error: 'skills/get manifest differs from skills/list' });
        }
      } catch (error) {
        summary.failures.push({ step: 'get', uri: entry.uri, error: describe(error) });
      }
      if (!Array.isArray(skill.resources)) {
        summary.failures.push({ step: 'list', uri: entry.uri, error: `resources is ${JSON.stringify(skill.resources)}` });
        continue;
      }
      for (const resource of skill.resources) {
        try {
          const file = await skills.read(skill, resource.uri);
          summary.files[resource.uri] = createHash('sha256').update(file.bytes).digest('hex');
          if (file.verified) summary.verified += 1;
          else summary.failures.push({ step: 'read', uri: resource.uri, error: 'not verified' });
        } catch (error) {
          summary.failures.push({ step: 'read', uri: resource.uri, error: describe(error) });
        }
      }
      if (skills.directoryRead) {
        await walkDirectory(skills, entry.uri.slice(0, -'/SKILL.md'.length), directoryFiles, summary.failures);
      } else {
        summary.failures.push({ step: 'readDirectory', uri: entry.uri, error: 'the server does not serve directory reads' });
      }
    }
  } catch (error) {
    summary.failures.push({ step: 'list', error: describe(error) });
  } finally {
    summary.directoryFiles = [...directoryFiles].sort();
    await client.close().catch(() => {});
  }
  process.stdout.write(JSON.stringify(summary));
}

await main();
