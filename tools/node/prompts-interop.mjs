// The TypeScript SDK v2's Client (@modelcontextprotocol/client) against `skillwire serve --prompts`, for the
// interop tests (tests/interop/test_prompts.py).
//
//   node prompts-interop.mjs '{"transport": "http", "url": "http://127.0.0.1:PORT/mcp", "era": "modern", "token": "T"}'
//   node prompts-interop.mjs '{"transport": "stdio", "command": "python", "args": [...], "era": "legacy"}'
//
// era "legacy" is the 2025-11-25 `initialize` handshake, "modern" the 2026-07-28 era (pinned: no fallback). One
// connection: prompts/list (the SDK walks every page itself), prompts/get of every prompt listed and of each name in `config.ask`
// (errors recorded), and resources/read of every SKILL.md that resources/list names. With `config.watch`
// ({"readyFile": PATH, "timeoutMs": N}) the client also follows prompts/list_changed (the SDK's `listChanged`
// option: notifications on the handshake era, a subscriptions/listen stream on 2026-07-28): it writes readyFile
// once listed, waits for a change, and reports the prompt names listed after it. Prints one JSON object:
//   {client, protocolVersion, capabilities, prompts: [Prompt], gets: {name: GetPromptResult},
//    errors: {name: {code, message}}, reads: {uri: text}, changed: [name] | null, failures: [{step, name?, error}]}
// and exits 0 whether or not there were failures (the test asserts on them); 2 when it cannot connect at all.

import { writeFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/client';
import { clientPackage, connected, describe, versionNegotiation } from './interop-common.mjs';

const config = JSON.parse(process.argv[2]);

async function main() {
  const summary = {
    client: `@modelcontextprotocol/client ${clientPackage.version} Client`,
    protocolVersion: null,
    capabilities: null,
    prompts: [],
    gets: {},
    errors: {},
    reads: {},
    changed: null,
    failures: [],
  };
  let changed;
  const seenChange = new Promise((resolve) => {
    changed = resolve;
  });
  const options = { versionNegotiation: versionNegotiation(config.era) };
  if (config.watch) {
    options.listChanged = {
      prompts: {
        debounceMs: 0,
        onChanged: (error, prompts) => {
          if (error) summary.failures.push({ step: 'listChanged', error: describe(error) });
          else changed(prompts.map((prompt) => prompt.name));
        },
      },
    };
  }
  const client = new Client({ name: 'skillwire-prompts-interop', version: '0' }, options);
  if (!(await connected(client, config, summary))) return;
  summary.capabilities = client.getServerCapabilities()?.prompts ?? null;
  try {
    summary.prompts = (await client.listPrompts()).prompts;
    for (const prompt of summary.prompts) {
      try {
        summary.gets[prompt.name] = await client.getPrompt({ name: prompt.name });
      } catch (error) {
        summary.failures.push({ step: 'getPrompt', name: prompt.name, error: describe(error) });
      }
    }
    for (const name of config.ask ?? []) {
      try {
        await client.getPrompt({ name });
        summary.failures.push({ step: 'ask', name, error: 'answered' });
      } catch (error) {
        summary.errors[name] = { code: error?.code ?? null, message: error?.message ?? String(error) };
      }
    }
    const { resources } = await client.listResources();
    for (const resource of resources.filter((r) => r.uri.endsWith('/SKILL.md'))) {
      const read = await client.readResource({ uri: resource.uri });
      summary.reads[resource.uri] = read.contents[0].text;
    }
    if (config.watch) {
      writeFileSync(config.watch.readyFile, 'ready\n');
      let timer;
      const timeout = new Promise((resolve) => {
        timer = setTimeout(() => resolve(null), config.watch.timeoutMs);
      });
      summary.changed = await Promise.race([seenChange, timeout]);
      clearTimeout(timer);
      if (summary.changed === null) summary.failures.push({ step: 'listChanged', error: 'no change seen in time' });
    }
  } catch (error) {
    summary.failures.push({ step: 'list', error: describe(error) });
  } finally {
    await client.close().catch(() => {});
  }
  process.stdout.write(JSON.stringify(summary));
}

await main();
