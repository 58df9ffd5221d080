// Text as a person reads it: times in words with the exact moment in a tooltip, and Markdown from the
// companion or an operator rendered as React elements. Nothing here builds HTML from a string (no
// dangerouslySetInnerHTML): every piece of text is a React text node, so `<script>` in a reply is shown as
// the characters it is, never run.
import { Fragment } from "react";
import { relative } from "./util.js";

// A moment: "3 min ago" (or "in 2 h 5 min"); the exact ISO time in the tooltip and in `dateTime`.
export function When({ iso, prefix = "" }) {
  const at = iso ? new Date(iso) : null;
  if (!at || Number.isNaN(at.getTime())) return iso ? <time>{iso}</time> : null;
  return (
    <>
      {prefix}
      <time dateTime={iso} title={iso}>
        {relative(iso)}
      </time>
    </>
  );
}

// Links only to the web or mail: a `javascript:` URL in Markdown stays text.
const SAFE_URL = /^(https?:|mailto:)/i;
// `code`, **strong**, *emphasis* or _emphasis_, [text](url): the inline Markdown a review thread uses.
const INLINE = /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*|\b_([^_\s][^_]*)_\b|\[([^\]]+)\]\(([^)\s]+)\)/g;

function inline(text, keyBase) {
  const out = [];
  let last = 0;
  let n = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    const key = `${keyBase}-${n++}`;
    if (m[2] !== undefined) out.push(<code key={key}>{m[2]}</code>);
    else if (m[3] !== undefined) out.push(<strong key={key}>{inline(m[3], key)}</strong>);
    else if (m[4] !== undefined) out.push(<em key={key}>{inline(m[4], key)}</em>);
    else if (m[5] !== undefined) out.push(<em key={key}>{inline(m[5], key)}</em>);
    else if (SAFE_URL.test(m[7]))
      out.push(
        <a key={key} href={m[7]} target="_blank" rel="noreferrer noopener">
          {m[6]}
        </a>,
      );
    else out.push(m[0]);
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

// Lines with their breaks kept (a companion writes one thought a line).
function lines(list, keyBase) {
  return list.map((line, n) => (
    <Fragment key={n}>
      {n > 0 && <br />}
      {inline(line, `${keyBase}-${n}`)}
    </Fragment>
  ));
}

const BULLET = /^\s*[-*+]\s+(.*)$/;
const NUMBERED = /^\s*(\d+)[.)]\s+(.*)$/;
const HEADING = /^(#{1,6})\s+(.*)$/;
const FENCE = /^\s*```/;

// Blocks: fenced code, headings, bullet and numbered lists, paragraphs (split at blank lines).
export function parseBlocks(text) {
  const blocks = [];
  const source = String(text ?? "").replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  while (i < source.length) {
    const line = source[i];
    if (!line.trim()) {
      i++;
    } else if (FENCE.test(line)) {
      const body = [];
      for (i++; i < source.length && !FENCE.test(source[i]); i++) body.push(source[i]);
      i++; // the closing fence (or the end)
      blocks.push({ kind: "code", text: body.join("\n") });
    } else if (HEADING.test(line)) {
      blocks.push({ kind: "heading", text: HEADING.exec(line)[2] });
      i++;
    } else if (BULLET.test(line) || NUMBERED.test(line)) {
      const ordered = NUMBERED.test(line);
      const pattern = ordered ? NUMBERED : BULLET;
      const items = [];
      const start = ordered ? Number(NUMBERED.exec(line)[1]) : 1;
      for (; i < source.length && pattern.test(source[i]); i++) {
        const m = pattern.exec(source[i]);
        items.push(ordered ? m[2] : m[1]);
      }
      blocks.push({ kind: ordered ? "ol" : "ul", items, start });
    } else {
      const para = [];
      for (; i < source.length; i++) {
        const next = source[i];
        if (!next.trim() || FENCE.test(next) || HEADING.test(next) || BULLET.test(next) || NUMBERED.test(next)) break;
        para.push(next);
      }
      blocks.push({ kind: "p", lines: para });
    }
  }
  return blocks;
}

export function Markdown({ text, className = "md" }) {
  const blocks = parseBlocks(text);
  return (
    <div className={className}>
      {blocks.map((block, n) => {
        const key = `b${n}`;
        if (block.kind === "code") return <pre key={key}>{block.text}</pre>;
        if (block.kind === "heading") return <p key={key} className="md-heading">{inline(block.text, key)}</p>;
        if (block.kind === "ul" || block.kind === "ol") {
          const List = block.kind;
          return (
            <List key={key} start={block.kind === "ol" && block.start !== 1 ? block.start : undefined}>
              {block.items.map((item, m) => (
                <li key={m}>{inline(item, `${key}-${m}`)}</li>
              ))}
            </List>
          );
        }
        return <p key={key}>{lines(block.lines, key)}</p>;
      })}
    </div>
  );
}

// Markdown inside one line (a blocker, a list entry): no blocks, only code, emphasis and links.
export function InlineMarkdown({ text }) {
  return <>{inline(String(text ?? ""), "i")}</>;
}
