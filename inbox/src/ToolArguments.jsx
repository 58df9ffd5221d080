import { show } from "./util.js";

// A tool call's arguments as a person reads them: on its own page (ToolApproval.jsx), in a list row and in
// a bulk preview (List.jsx, Triage.jsx). A shell tool's command (Bash-like tools name it so) is read as a
// command, not as a JSON string; the rest as key/value lines.
const COMMAND_KEYS = ["command", "cmd", "script"];
const ARGUMENTS_MARK = "\narguments:\n"; // where a tool approval's prompt lists them (ToolApprovalSpec.prompt)
const SHORT = 80; // characters of arguments in one preview line

export function commandOf(args) {
  const key = COMMAND_KEYS.find((k) => typeof (args || {})[k] === "string");
  return key ? { key, text: args[key] } : null;
}

// An inbox item of kind tool_approval carries the call only in its prompt: "Allow the tool call <tool>
// (<risk> risk)? <reason>" then the arguments as JSON (cut past 3000 characters: then `args` is null and
// `raw` is the text as sent).
export function toolCallOf(item) {
  const [asked, raw = ""] = (item.prompt || "").split(ARGUMENTS_MARK);
  const tool = (/^Allow the tool call (\S+) \(/.exec(asked) || [])[1] || "the tool";
  let args = null;
  try {
    const parsed = JSON.parse(raw);
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) args = parsed;
  } catch {
    /* cut or not JSON: shown as its text */
  }
  return { asked, tool, args, raw };
}

// One line: the command, else the arguments as "key: value" pairs (a nested value as compact JSON), cut at
// SHORT characters.
export function argumentsLine({ args, raw }) {
  const command = args && commandOf(args);
  const pairs = () =>
    Object.entries(args)
      .map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`)
      .join(", ");
  const text = command ? command.text : args ? pairs() : raw.split(/\s+/).join(" ");
  return text.length <= SHORT ? text : `${text.slice(0, SHORT - 1)}…`;
}

function Value({ value }) {
  if (value !== null && typeof value === "object")
    return (
      <details>
        <summary>{Array.isArray(value) ? `${value.length} items` : `${Object.keys(value).length} fields`}</summary>
        <pre>{JSON.stringify(value, null, 2)}</pre>
      </details>
    );
  return <code>{show(value)}</code>;
}

// A nested value in a row: a small tree of key/value lines, never a block of JSON.
function CompactValue({ value }) {
  if (value === null || typeof value !== "object") return <code>{show(value)}</code>;
  const entries = Array.isArray(value) ? value.map((v, n) => [String(n), v]) : Object.entries(value);
  if (entries.length === 0) return <code>{Array.isArray(value) ? "[]" : "{}"}</code>;
  return (
    <dl className="arguments compact nested">
      {entries.map(([k, v]) => (
        <div key={k}>
          <dt>{k}:</dt>
          <dd>
            <CompactValue value={v} />
          </dd>
        </div>
      ))}
    </dl>
  );
}

// `compact`: for a list row (the command on one line, the rest a small key/value tree).
export function Arguments({ args, compact = false, label = "" }) {
  const command = commandOf(args);
  const rest = Object.entries(args).filter(([k]) => !command || k !== command.key);
  const named = (what) => (label ? `${what} ${label}` : what);
  return (
    <>
      {command && (
        <pre className={`command${compact ? " compact" : ""}`} aria-label={named("Command")} title={compact ? command.text : undefined}>
          <span aria-hidden="true">$ </span>
          {command.text}
        </pre>
      )}
      {rest.length > 0 && (
        <dl className={`arguments${compact ? " compact" : ""}`} aria-label={named("Arguments")}>
          {rest.map(([k, v]) => (
            <div key={k}>
              <dt>{compact ? `${k}:` : k}</dt>
              <dd>{compact ? <CompactValue value={v} /> : <Value value={v} />}</dd>
            </div>
          ))}
        </dl>
      )}
    </>
  );
}
