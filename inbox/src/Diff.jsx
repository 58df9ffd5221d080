// The diff the review's companion read (GET /api/runs/{run}/review/diff): a file list that jumps to
// each file, then each file's hunks with old and new line numbers, added and removed lines coloured
// and the code highlighted (prism-react-renderer, bundled: nothing is fetched at run time).
import { useMemo } from "react";
import { Highlight, themes } from "prism-react-renderer";

const LANGUAGES = {
  py: "python", js: "javascript", mjs: "javascript", cjs: "javascript", jsx: "jsx", ts: "typescript",
  tsx: "tsx", json: "json", go: "go", rs: "rust", c: "c", h: "c", cc: "cpp", cpp: "cpp", hpp: "cpp",
  kt: "kotlin", swift: "swift", md: "markdown", yml: "yaml", yaml: "yaml", sql: "sql", html: "markup",
  xml: "markup", svg: "markup", css: "css", graphql: "graphql", sh: "bash", m: "objectivec",
};
const languageOf = (path) => LANGUAGES[(path.split(".").pop() || "").toLowerCase()] || "plain";

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@ ?(.*)$/;

// One file's unified text as rows: hunk headers, and code lines with their old/new numbers.
export function diffRows(text) {
  const rows = [];
  let old = 0;
  let now = 0;
  let inHunk = false;
  for (const line of text.split("\n")) {
    const hunk = HUNK.exec(line);
    if (hunk) {
      [old, now, inHunk] = [Number(hunk[1]), Number(hunk[2]), true];
      rows.push({ kind: "hunk", text: line });
    } else if (!inHunk) {
      if (line.startsWith("Binary files")) rows.push({ kind: "note", text: "Binary file: no text diff." });
    } else if (line.startsWith("+")) {
      rows.push({ kind: "add", code: line.slice(1), now: now++ });
    } else if (line.startsWith("-")) {
      rows.push({ kind: "del", code: line.slice(1), old: old++ });
    } else if (line.startsWith(" ")) {
      rows.push({ kind: "ctx", code: line.slice(1), old: old++, now: now++ });
    } else if (line.startsWith("\\")) {
      rows.push({ kind: "note", text: line.slice(2) });
    }
  }
  return rows;
}

const STATUS_WORDS = { added: "added", deleted: "deleted", renamed: "renamed", modified: "modified" };
const MARK = { add: "+", del: "−", ctx: " " };
const fileAnchor = (n) => `diff-file-${n}`;

// A file the bound left out has no counts to give: its lines are not in the text.
function Counts({ file }) {
  if (!file.text) return <span className="diffcounts cutword">not shown (past the size bound)</span>;
  return (
    <span className="diffcounts">
      {STATUS_WORDS[file.status] || file.status} · <span className={file.insertions ? "plus" : ""}>+{file.insertions}</span>{" "}
      <span className={file.deletions ? "minus" : ""}>−{file.deletions}</span>
      {file.truncated && <span className="cutword"> · cut at the size bound</span>}
    </span>
  );
}

function FileDiff({ file, n }) {
  const rows = useMemo(() => diffRows(file.text), [file.text]);
  const code = rows.filter((r) => r.code !== undefined).map((r) => r.code).join("\n");
  return (
    <section id={fileAnchor(n)} className="difffile" aria-label={`Diff of ${file.path}`} tabIndex={-1}>
      <h3 className="difffile-head">
        <code>{file.path}</code>
        {file.old_path && <span className="muted"> (renamed from {file.old_path})</span>}
        <Counts file={file} />
      </h3>
      {!file.text && <p className="cut">Not shown: this file's diff is past the diff's size bound.</p>}
      {file.text && (
        <Highlight theme={themes.github} code={code} language={languageOf(file.path)}>
          {({ tokens, getTokenProps }) => {
            let next = 0;
            return (
              <div className="diffscroll">
                <table className="diff">
                  <tbody>
                    {rows.map((row, i) => {
                      if (row.code === undefined)
                        return (
                          <tr key={i} className={row.kind}>
                            <td colSpan={4}>{row.text}</td>
                          </tr>
                        );
                      const line = tokens[next++] || [];
                      return (
                        <tr key={i} className={row.kind}>
                          <td className="ln">{row.old ?? ""}</td>
                          <td className="ln">{row.now ?? ""}</td>
                          <td className="mark" aria-hidden="true">
                            {MARK[row.kind]}
                          </td>
                          <td className="code">
                            {line.map((token, k) => {
                              const { key, ...props } = getTokenProps({ token });
                              return <span key={k} {...props} />;
                            })}
                          </td>
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              </div>
            );
          }}
        </Highlight>
      )}
      {file.text && file.truncated && (
        <p className="cut">Cut here: the rest of this file's diff is past the diff's size bound.</p>
      )}
    </section>
  );
}

const jump = (n) => {
  const target = document.getElementById(fileAnchor(n));
  if (!target) return;
  target.scrollIntoView({ block: "start" });
  target.focus({ preventScroll: true });
};

// `moved`: the run branch's tip is past the reviewed commit (the review's own reading; the diff source
// itself may still give the reviewed diff, e.g. the stacks' stored diff build).
export function DiffView({ diff, error, moved }) {
  if (error) return <p className="warning">The diff could not be read: {error.message}</p>;
  if (!diff) return <p role="status">Loading the diff…</p>;
  const notShown = diff.files.filter((f) => !f.text).length;
  return (
    <section aria-labelledby="diff-title" className="diffview">
      <h2 id="diff-title">
        Diff of <code>{diff.head.slice(0, 12)}</code>
        <span className="diffcounts">
          {" "}
          {diff.run_branch} against {diff.target}
        </span>
      </h2>
      {(moved || diff.branch_moved) && (
        <p className="warning moved" aria-label="Branch moved">
          The branch moved after the review: a new turn reviews it.
          {diff.branch_moved && diff.reviewed_head && (
            <>
              {" "}
              This is the diff of the new head, not of the reviewed commit <code>{diff.reviewed_head.slice(0, 12)}</code>.
            </>
          )}
        </p>
      )}
      {diff.truncated && (
        <p className="cut" aria-label="Diff truncated">
          Diff truncated at its size bound: showing {diff.shown_bytes} of {diff.total_bytes} bytes (bound{" "}
          {diff.max_bytes} bytes){notShown > 0 && `; ${notShown} ${notShown === 1 ? "file" : "files"} not shown`}.
          The companion read the same cut diff.
        </p>
      )}
      <nav aria-label="Changed files">
        <ol className="difffiles">
          {diff.files.map((file, n) => (
            <li key={file.path}>
              <button type="button" className="link" onClick={() => jump(n)}>
                {file.path}
              </button>{" "}
              <Counts file={file} />
            </li>
          ))}
        </ol>
      </nav>
      {diff.files.map((file, n) => (
        <FileDiff key={file.path} file={file} n={n} />
      ))}
    </section>
  );
}
