import { useEffect, useRef, useState } from "react";
import { api, deliveryPending, winnerText } from "./api.js";
import { argumentsLine, toolCallOf } from "./ToolArguments.jsx";

// Triage at volume: select questions and tool approvals (checkbox or x), pick one action for them, read one
// line per item of exactly what will be sent, confirm (Enter) or cancel (Esc), then read each item's result.
// An action applies to the items of its kind; on a mixed selection the others are named and skipped.

export const BULK_KINDS = ["question", "tool_approval"];

// How an item is named in a line: a question by its prompt, a tool call by its tool and arguments.
export function itemName(item) {
  if (item.kind !== "tool_approval") return item.title || item.prompt;
  const call = toolCallOf(item);
  return `${call.tool} ${argumentsLine(call)}`;
}

const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;
const isQuestion = (item) => item.kind === "question";
const isToolCall = (item) => item.kind === "tool_approval";

// The actions the chosen items allow. Each names the items it applies to (`applies`), what it sends to one
// (`answer`) and that as a line of the preview (`line`).
function answerAction(option, chosen) {
  const questions = chosen.filter(isQuestion);
  const all = questions.length === chosen.length;
  return {
    label: all ? `Answer all: ${option}` : `Answer ${plural(questions.length, "question", "questions")}: ${option}`,
    applies: isQuestion,
    skipWhy: "not a question",
    answer: () => option,
    line: () => `answer ${option}`,
    done: () => `answered with ${option}`,
  };
}

function approveAction(chosen) {
  const calls = chosen.filter(isToolCall);
  return {
    label: calls.length === chosen.length ? "Approve all" : `Approve ${plural(calls.length, "tool call", "tool calls")}`,
    applies: isToolCall,
    skipWhy: "not a tool approval",
    answer: () => ({ decision: "approve" }),
    line: (item) => `approve ${itemName(item)}`,
    namesItem: true, // the line is the tool and its arguments already
    done: () => "approved",
  };
}

function denyAction(reason) {
  return {
    applies: isToolCall,
    skipWhy: "not a tool approval",
    answer: () => ({ decision: "deny", reason }),
    line: () => `deny: ${reason}`,
    done: () => `denied: ${reason}`,
  };
}

export function BulkBar({ chosen, onPreview, barRef }) {
  const [text, setText] = useState("");
  const [denying, setDenying] = useState(false);
  const [reason, setReason] = useState("");
  const questions = chosen.filter(isQuestion);
  const calls = chosen.filter(isToolCall);
  const common = questions.length
    ? questions.map((i) => i.options || []).reduce((a, b) => a.filter((o) => b.includes(o)))
    : [];
  const mixed = questions.length > 0 && calls.length > 0;
  return (
    <section className="bulk" aria-label="Bulk answer" ref={barRef}>
      <span>{chosen.length} selected</span>
      {mixed && (
        <p className="hint" role="note">
          Mixed selection: an answer goes to the {plural(questions.length, "question", "questions")}, an approve or deny to
          the {plural(calls.length, "tool call", "tool calls")}; the preview names what each action skips.
        </p>
      )}
      {common.map((option) => (
        <button type="button" key={option} onClick={() => onPreview(answerAction(option, chosen))}>
          {answerAction(option, chosen).label}
        </button>
      ))}
      {calls.length > 0 && (
        <>
          <button type="button" onClick={() => onPreview(approveAction(chosen))}>
            {approveAction(chosen).label}
          </button>
          <button type="button" aria-expanded={denying} onClick={() => setDenying((was) => !was)}>
            {calls.length === chosen.length ? "Deny all…" : `Deny ${plural(calls.length, "tool call", "tool calls")}…`}
          </button>
        </>
      )}
      {denying && calls.length > 0 && (
        <form
          aria-label="Deny the selected tool calls"
          onSubmit={(e) => {
            e.preventDefault();
            if (reason.trim()) onPreview({ ...denyAction(reason.trim()), label: "Deny" });
          }}
        >
          <input
            aria-label="Reason to deny (the agent reads it)"
            placeholder="reason (the agent reads it)"
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            autoFocus
          />
          <button type="submit" disabled={!reason.trim()}>
            Preview deny
          </button>
        </form>
      )}
      {questions.length > 0 && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            const value = text.trim();
            if (value) onPreview({ ...answerAction(value, chosen), label: `Answer: ${value}` });
          }}
        >
          <input
            aria-label="Answer for the selected questions"
            placeholder="or type an answer"
            value={text}
            onChange={(e) => setText(e.target.value)}
          />
          <button type="submit" disabled={!text.trim()}>
            Answer {questions.length} selected
          </button>
        </form>
      )}
    </section>
  );
}

// One item's result in words: answered, already answered by the 409's winner, or refused with the 4xx's reason.
async function sendOne(item, action) {
  try {
    const answered = await api.answer(item.run_id, item.id, action.answer(item));
    if (answered && answered.status === "pending" && answered.approval)
      return { ok: true, text: `vote counted: ${answered.approval.approvals} of ${answered.approval.needed}` };
    return { ok: true, text: action.done(item) + (deliveryPending(answered) ? " (delivery pending)" : "") };
  } catch (error) {
    return { ok: false, text: error.status === 409 ? winnerLine(error) : `refused: ${error.message}` };
  }
}

// A 409's winner in words; a tool call's decision as "already denied by X: why", not as its JSON.
function winnerLine(error) {
  const winner = error.body && error.body.winner;
  const decided = winner && winner.value && typeof winner.value === "object" ? winner.value : null;
  if (!decided || !decided.decision) return winnerText(error);
  const verb = { approve: "approved", deny: "denied", edit: "approved with edits" }[decided.decision] || decided.decision;
  return `already ${verb} by ${winner.by || "someone"}${decided.reason ? `: ${decided.reason}` : ""}`;
}

// The confirmation panel: focus moves in (to Confirm), Enter confirms, Esc cancels (or closes the results),
// and the focus goes back where it was (`onClose` puts it there).
export function BulkPreview({ items, action, onSent, onClose }) {
  const [results, setResults] = useState(null);
  const [busy, setBusy] = useState(false);
  const confirm = useRef(null);
  const close = useRef(null);
  const sending = useRef(false);
  const applied = items.filter(action.applies);
  useEffect(() => {
    (results ? close : confirm).current?.focus();
  }, [results]);
  const send = async () => {
    if (sending.current || results || applied.length === 0) return;
    sending.current = true;
    setBusy(true);
    const sent = await Promise.all(applied.map(async (item) => [item.id, await sendOne(item, action)]));
    const byId = Object.fromEntries(sent);
    setResults(byId);
    setBusy(false);
    onSent(byId);
  };
  const onKeyDown = (event) => {
    if (event.key === "Escape") {
      event.preventDefault();
      onClose();
    } else if (event.key === "Enter") {
      // Enter on Cancel cancels (its own click); anywhere else in the panel it confirms, or closes the results.
      if (event.target.closest("a") || (event.target.tagName === "BUTTON" && event.target !== confirm.current && event.target !== close.current)) return;
      event.preventDefault(); // not also the focused button's own click
      if (results) onClose();
      else send();
    }
  };
  return (
    <section className="card bulk-preview" role="dialog" aria-labelledby="bulk-preview-title" onKeyDown={onKeyDown}>
      <h2 id="bulk-preview-title">
        {results ? "Results" : `Send to ${plural(applied.length, "item", "items")}?`}
      </h2>
      <ol className="preview-lines" aria-label="What will be sent">
        {items.map((item) => {
          const applies = action.applies(item);
          const result = results && results[item.id];
          return (
            <li key={item.id} data-preview-id={item.id} className={applies ? "" : "skipped"}>
              <span className={`kind kind-${item.kind}`}>{item.kind}</span>{" "}
              {applies ? (
                <>
                  <code className="sends">{action.line(item)}</code>
                  {!action.namesItem && <span className="about"> — {itemName(item)}</span>}
                </>
              ) : (
                <span>
                  skip — {itemName(item)} ({action.skipWhy})
                </span>
              )}
              {result && (
                <span className={`result ${result.ok ? "ok" : "error"}`} data-result={result.ok ? "ok" : "error"}>
                  {" "}
                  → {result.text}
                </span>
              )}
            </li>
          );
        })}
      </ol>
      {!results && (
        <p className="hint">
          <kbd>Enter</kbd> sends, <kbd>Esc</kbd> cancels.
        </p>
      )}
      <div className="options">
        {!results ? (
          <>
            <button type="button" className="primary" ref={confirm} disabled={busy || applied.length === 0} onClick={send}>
              Confirm: send {plural(applied.length, "answer", "answers")}
            </button>
            <button type="button" onClick={onClose} disabled={busy}>
              Cancel
            </button>
          </>
        ) : (
          <button type="button" ref={close} onClick={onClose}>
            Close
          </button>
        )}
      </div>
      <p className="sr-only" role="status">
        {results ? `${Object.values(results).filter((r) => r.ok).length} of ${applied.length} sent` : ""}
      </p>
    </section>
  );
}
