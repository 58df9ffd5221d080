// A preview of the server's `path=value` state edits (layers/baton/python/baton/domain/state_edits.py):
// the same grammar and rules, applied to a copy of the snapshot so the operator sees the result before
// sending. The server applies them again and stays the authority (its 422 is shown if it disagrees).

const SEGMENT = /^([^[\]]*)((?:\[[^[\]]*\])*)$/;
const INDEX = /\[([^[\]]*)\]/g;

function parseValue(raw) {
  try {
    const value = JSON.parse(raw);
    if (typeof value === "number" && !Number.isFinite(value)) return raw;
    return value;
  } catch {
    return raw;
  }
}

function parsePath(pathText) {
  let text = pathText.trim();
  if (text.startsWith("$.")) text = text.slice(2);
  if (!text) throw new Error("the path is empty");
  const tokens = [];
  for (const segment of text.split(".")) {
    const match = SEGMENT.exec(segment);
    if (!match) throw new Error(`malformed path segment '${segment}'`);
    if (!match[1]) throw new Error("empty path segment (a key is required before '.' or '[')");
    tokens.push(match[1]);
    for (const index of match[2].matchAll(INDEX)) {
      if (!/^[0-9]+$/.test(index[1])) throw new Error(`array index must be a non-negative integer, got '${index[1]}'`);
      tokens.push(Number(index[1]));
    }
  }
  return tokens;
}

function kindOf(value) {
  if (Array.isArray(value)) return "an array";
  if (value === null) return "null";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

// Applies one edit in place; returns the value the path held before (undefined when it was missing).
function applyOne(root, tokens, value) {
  let node = root;
  let before;
  tokens.forEach((token, n) => {
    const last = n === tokens.length - 1;
    const isIndex = typeof token === "number" || (Array.isArray(node) && /^[0-9]+$/.test(token));
    if (isIndex) {
      if (!Array.isArray(node)) throw new Error(`${kindOf(node)} is not an array; use .key instead`);
      const index = Number(token);
      if (index >= node.length) throw new Error(`index ${index} is past the end (length ${node.length})`);
      if (last) [before, node[index]] = [node[index], value];
      else node = node[index];
    } else {
      if (node === null || typeof node !== "object" || Array.isArray(node))
        throw new Error(`cannot set '${token}' inside ${kindOf(node)}`);
      if (last) [before, node[token]] = [node[token], value];
      else {
        if (!(token in node)) node[token] = {};
        node = node[token];
      }
    }
  });
  return before;
}

// Returns {state, edits, changes, errors}: changes holds {path, before, after} for each edit that applies,
// errors {line, message} for each edit that does not.
export function previewStateEdits(snapshot, text) {
  const lines = text.split("\n").map((l) => l.trim()).filter(Boolean);
  const state = structuredClone(snapshot || {});
  const errors = [];
  const changes = [];
  lines.forEach((line, n) => {
    const eq = line.indexOf("=");
    if (eq < 0) return errors.push({ line: n + 1, message: `${line}: expected path=value (no '=' found)` });
    try {
      const after = parseValue(line.slice(eq + 1));
      const before = applyOne(state, parsePath(line.slice(0, eq)), after);
      changes.push({ path: line.slice(0, eq).trim(), before, after });
    } catch (error) {
      errors.push({ line: n + 1, message: `${line}: ${error.message}` });
    }
  });
  return { state, edits: lines, changes, errors };
}
