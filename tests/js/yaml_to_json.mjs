// Reference renderer for the frontmatter parity tests (tests/test_frontmatter_parity.py).
//
// Reads a JSON array of YAML texts on stdin and prints a JSON array with one result per text:
//   {"ok": <value>}          YAML.parse(text) (yaml v2, default options: YAML 1.2 core schema), as JSON
//   {"error": "<message>"}   YAML.parse threw (syntax error, duplicate key, unresolved alias, alias limit...)
//   {"notjson": "<reason>"}  YAML.parse returned something JSON cannot carry faithfully: NaN/Infinity,
//                            Date/Map/Set/binary values, circular data, keys that are collections, or two
//                            keys that JavaScript turns into the same object property (e.g. 1 and "1").
//
// `yaml` is resolved as Node resolves it from YAML_RESOLVE_FROM (a file path; the test passes
// tools/node/package.json, so tools/node/node_modules/yaml is used) or else from this file's folder.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const YAML = createRequire(process.env.YAML_RESOLVE_FROM ?? import.meta.url)('yaml');

function notJson(value, seen = new Set()) {
  if (typeof value === 'number') return Number.isFinite(value) ? null : `number ${value}`;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return null;
  if (typeof value !== 'object') return `a ${typeof value} value`;
  if (seen.has(value)) return 'circular data';
  const proto = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && proto !== Object.prototype) return `a ${value.constructor?.name ?? 'non-plain'} value`;
  seen.add(value);
  for (const item of Object.values(value)) {
    const reason = notJson(item, seen);
    if (reason) return reason;
  }
  seen.delete(value);
  return null;
}

// JavaScript object keys are strings: YAML.parse stringifies scalar keys (null -> "") and collection keys.
function keyProblem(doc) {
  let problem = null;
  YAML.visit(doc, {
    Map(_, map) {
      const keys = new Set();
      for (const { key } of map.items) {
        const node = YAML.isAlias(key) ? key.resolve(doc) : key;
        if (YAML.isCollection(node)) {
          problem = 'a key that is a collection';
          return YAML.visit.BREAK;
        }
        const value = YAML.isScalar(node) ? node.value : node;
        const name = value === null || value === undefined ? '' : String(value);
        if (keys.has(name)) {
          problem = `two keys that both become ${JSON.stringify(name)}`;
          return YAML.visit.BREAK;
        }
        keys.add(name);
      }
      return undefined;
    },
  });
  return problem;
}

function render(text) {
  let value;
  try {
    value = YAML.parse(text);
  } catch (error) {
    return { error: String(error?.message ?? error).split('\n')[0] };
  }
  const reason = notJson(value) ?? keyProblem(YAML.parseDocument(text));
  return reason ? { notjson: reason } : { ok: value };
}

const texts = JSON.parse(readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify(texts.map(render)) + '\n');
