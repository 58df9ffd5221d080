import { useEffect, useState } from "react";
import { api, deliveryPending, DELIVERY_PENDING_TEXT, winnerText } from "./api.js";
import { ago, resultClass, settledBy } from "./util.js";
import { SignIn } from "./SignIn.jsx";

// The question as its run's pending list shows it (a pause, `ask`, as the inbox lists it); when it is
// no longer pending, what its run's events say about it.
async function loadQuestion(runId, id) {
  const pending = (await api.pendingQuestions(runId)).pending || [];
  const question = pending.find((q) => q.interaction_id === id);
  if (question) {
    const waited = (Date.now() - Date.parse(question.created_at)) / 1000;
    const item = { id, run_id: runId, kind: "question", ...question.request, waited_s: waited };
    return { item: { ...item, approval: question.approval }, settled: null };
  }
  const page = await api.inbox({ run: runId, limit: 100 }).catch(() => ({ items: [] }));
  const item = (page.items || []).find((i) => i.id === id);
  if (item) return { item, settled: null };
  const events = (await api.events(runId)).events || [];
  const asked = events.find((e) => e.type === "human_input_requested" && e.data.interaction_id === id);
  const data = asked ? asked.data : { prompt: "(unknown question)", node: "" };
  return {
    item: { id, run_id: runId, kind: data.kind || "question", ...data },
    settled: settledBy(events, id) || "no longer waiting",
  };
}

// A quorum question's count: "1 of 2 approvals, by alice" (the item stays pending until it is met).
export function approvalText(approval) {
  if (!approval) return "";
  const by = approval.approved_by && approval.approved_by.length ? `, by ${approval.approved_by.join(", ")}` : "";
  const against = approval.rejections ? ` · ${approval.rejections} rejected` : "";
  return `${approval.approvals} of ${approval.needed} approvals${by}${against}`;
}

// The named approvers of a quorum the signed-in operator stands in for (away, they named them delegate).
function seatsFilled(approval, standingIn) {
  const approvers = (approval && approval.approvers) || [];
  return standingIn.filter((s) => approvers.includes(s.operator));
}

export function QuestionScreen({ runId, interactionId }) {
  const [state, setState] = useState(null);
  const [standingIn, setStandingIn] = useState([]);
  useEffect(() => {
    api.away().then((away) => setStandingIn(away.standing_in_for || []), () => setStandingIn([]));
  }, []);
  const [error, setError] = useState(null);
  const [text, setText] = useState("");
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState(null);
  const [winner, setWinner] = useState(null); // who answered first, and with what (the 409's `winner`)
  useEffect(() => {
    loadQuestion(runId, interactionId).then(setState, setError);
  }, [runId, interactionId]);

  if (error && error.status === 401) return <SignIn />;
  if (error) return <p className="error" role="alert">{error.message}</p>;
  if (!state) return <p role="status">Loading…</p>;
  const { item, settled } = state;

  const send = async (value) => {
    setBusy(true);
    try {
      let answered;
      if (item.kind === "ask") answered = await api.resumeRun(runId, { answer: value }, item.node);
      else {
        answered = await api.answer(runId, interactionId, value);
        if (answered && answered.status === "pending" && answered.approval) {
          const counted = answered.approval.already_counted ? "Your vote was already counted" : "Vote counted";
          setState({ item: { ...item, approval: answered.approval }, settled: null });
          setResult({ ok: true, text: `${counted}: ${approvalText(answered.approval)}.` });
          return;
        }
      }
      if (deliveryPending(answered)) setResult({ ok: true, pending: true, text: DELIVERY_PENDING_TEXT });
      else setResult({ ok: true, text: `Answered with ${value}.` });
    } catch (err) {
      // A 409 names the answer that won; the screen stays, so the operator sees it in place.
      const why = err.status === 409 ? `This question was ${winnerText(err)}.` : err.message;
      setResult({ ok: false, text: why, path: err.body && err.body.path });
      if (err.status === 409 && err.body && err.body.winner) setWinner(err.body.winner);
    } finally {
      setBusy(false);
    }
  };
  const done = settled || (result && result.ok) || winner;
  // After a 409 the options stay in view, disabled, each saying who answered (and which one won).
  const by = winner && (winner.by || "someone");
  const won = winner && (typeof winner.value === "string" ? winner.value : JSON.stringify(winner.value));
  const caption = (option) => (option === won ? `chosen by ${by}` : `${by} answered ${won}`);
  const free = item.kind === "ask" || item.allow_free_text || !item.options || item.options.length === 0;
  return (
    <section aria-labelledby="q-title" className="card">
      <p className="crumbs">
        <a href="#/">Inbox</a> / <a href={`#/run/${encodeURIComponent(runId)}`}>run {runId}</a> / node {item.node}
      </p>
      <h1 id="q-title">{item.prompt}</h1>
      <p className="meta">
        {item.kind} · waited {ago(item.waited_s)} {item.claimed_by && `· claimed by ${item.claimed_by}`}
        {item.approval && ` · ${approvalText(item.approval)}`}
      </p>
      {seatsFilled(item.approval, standingIn).map((seat) => (
        <p className="delegated" role="note" key={seat.operator}>
          for {seat.operator} (away): you vote in their seat until {new Date(seat.until).toLocaleDateString()}
        </p>
      ))}
      {settled && <p role="status">This question was {settled}.</p>}
      {item.options && item.options.length > 0 && (
        <div className="options big" role="group" aria-label="Answer with an option">
          {item.options.map((option) => (
            <button type="button" key={option} disabled={busy || done} onClick={() => send(option)}>
              {option}
              {winner && <small className="answered-by">{caption(option)}</small>}
            </button>
          ))}
        </div>
      )}
      {free && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (text.trim()) send(text.trim());
          }}
        >
          <label htmlFor="free-text">Your answer</label>
          <textarea id="free-text" rows={3} value={text} onChange={(e) => setText(e.target.value)} disabled={done} />
          <button type="submit" disabled={busy || done || !text.trim()}>
            Send answer
          </button>
        </form>
      )}
      {result && (
        <p className={resultClass(result)} role={result.ok ? "status" : "alert"}>
          {result.text}
        </p>
      )}
      {done && <a href="#/">Back to the inbox</a>}
    </section>
  );
}
