import { useCallback, useEffect, useState } from "react";
import { api } from "./api.js";
import { SignIn } from "./SignIn.jsx";
import { useInterval } from "./util.js";

const ACTION_LABELS = {
  approve_merge: "Approve & merge",
  force_merge: "Force-merge",
  request_changes: "Request changes",
};

function Verdict({ verdict }) {
  if (!verdict) return null;
  const blockers = verdict.blockers || [];
  return (
    <section aria-labelledby="verdict-title" className="verdict">
      <h2 id="verdict-title">Verdict</h2>
      <p>
        <strong>{verdict.decision}</strong>
        {typeof verdict.confidence === "number" && ` · confidence ${Math.round(verdict.confidence * 100)}%`}
      </p>
      {blockers.length > 0 ? (
        <ul aria-label="Blockers">
          {blockers.map((b) => (
            <li key={b}>{b}</li>
          ))}
        </ul>
      ) : (
        <p>No blockers.</p>
      )}
    </section>
  );
}

function DiffStats({ diff }) {
  if (!diff) return null;
  const stats = ["files_changed", "insertions", "deletions"].filter((k) => diff[k] !== undefined);
  return (
    <p className="diffstats" aria-label="Diff stats">
      {stats.map((k) => `${diff[k]} ${k.replace("_", " ")}`).join(" · ")}
      {diff.truncated && " · diff truncated"}
    </p>
  );
}

function Thread({ thread }) {
  const steps = [...thread].reverse().find((t) => t.test_steps && t.test_steps.length);
  return (
    <>
      {steps && (
        <section aria-labelledby="steps-title">
          <h2 id="steps-title">Test steps</h2>
          <ol className="steps">
            {steps.test_steps.map((step, n) => (
              <li key={n}>{step}</li>
            ))}
          </ol>
        </section>
      )}
      <section aria-labelledby="thread-title">
        <h2 id="thread-title">Thread</h2>
        <ol className="thread" aria-label="Review thread">
          {thread.map((turn) => (
            <li key={turn.n} className={`turn ${turn.role}`}>
              <p className="who">
                {turn.role === "companion" ? `companion${turn.is_model ? ` (${turn.model})` : " (offline, not a model)"}` : turn.by || "operator"}{" "}
                <time>{turn.at}</time>
              </p>
              <p className="text">{turn.text}</p>
            </li>
          ))}
        </ol>
      </section>
    </>
  );
}

function Actions({ review, busy, act, result, rejected }) {
  const [strategy, setStrategy] = useState(review.merge_strategy || "squash");
  const [message, setMessage] = useState("");
  const [reply, setReply] = useState("");
  const allowed = review.allowed_actions || [];
  const open = review.status === "pending";
  const extra = () => ({
    __review_merge_strategy: strategy,
    ...(message.trim() ? { __review_message: message.trim() } : {}),
  });
  return (
    <>
      {allowed.includes("reply") && (
        <form
          className="reply"
          onSubmit={(e) => {
            e.preventDefault();
            act({ __review_action: "reply", __review_reply: reply.trim() }).then((ok) => ok && setReply(""));
          }}
        >
          <label htmlFor="reply">Reply to the companion</label>
          <textarea id="reply" rows={2} value={reply} onChange={(e) => setReply(e.target.value)} />
          <button type="submit" disabled={!open || busy || !reply.trim()}>
            Send reply
          </button>
        </form>
      )}
      <fieldset className="merge">
        <legend>Merge</legend>
        <label htmlFor="strategy">Strategy</label>
        <select id="strategy" value={strategy} onChange={(e) => setStrategy(e.target.value)}>
          <option value="squash">squash</option>
          <option value="merge">merge (fast-forward)</option>
        </select>
        <label htmlFor="squash-message">Squash message or reason (optional)</label>
        <textarea id="squash-message" rows={2} value={message} onChange={(e) => setMessage(e.target.value)} />
        <div className="actions">
          {Object.entries(ACTION_LABELS)
            .filter(([action]) => allowed.includes(action))
            .map(([action, label]) => (
              <button
                type="button"
                key={action}
                className={action === "approve_merge" ? "primary" : ""}
                disabled={!open || busy}
                onClick={() => act({ __review_action: action, ...extra() })}
              >
                {label}
              </button>
            ))}
        </div>
        {/* Right beside the buttons (on a phone too): why the last merge did not land, and what the
            last action got, so the operator sees the guard's reason where the next click is. */}
        {rejected && (
          <p className="error" role="alert" aria-label="Why the last merge did not land">
            {rejected}
          </p>
        )}
        {result && (
          <p className={result.ok ? "ok" : "error"} role={result.ok ? "status" : "alert"}>
            {result.text}
          </p>
        )}
      </fieldset>
    </>
  );
}

export function ReviewScreen({ runId }) {
  const [review, setReview] = useState(null);
  const [run, setRun] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState(null);
  const refresh = useCallback(async () => {
    try {
      const [r, summary] = await Promise.all([api.review(runId), api.run(runId)]);
      setReview(r);
      setRun(summary);
      setError(null);
    } catch (err) {
      setError(err);
    }
  }, [runId]);
  useEffect(() => {
    refresh();
  }, [refresh]);
  useInterval(refresh, 1500);

  if (error && error.status === 401) return <SignIn />;
  if (!review) return error ? <p className="error" role="alert">{error.message}</p> : <p role="status">Loading…</p>;

  const act = async (answers) => {
    setBusy(true);
    setResult(null);
    try {
      const done = await api.resumeRun(runId, answers, review.gate);
      setResult({ ok: true, text: `Sent: ${done.action}.` });
      await refresh();
      return true;
    } catch (err) {
      // The guard's refusal (e.g. blockers need force_merge) is shown; the buttons stay usable.
      setResult({ ok: false, text: err.message });
      return false;
    } finally {
      setBusy(false);
    }
  };
  const merge = review.merge || {};
  return (
    <section aria-labelledby="r-title" className="card">
      <p className="crumbs">
        <a href="#/">Inbox</a> / <a href={`#/run/${encodeURIComponent(runId)}`}>run {runId}</a> / gate {review.gate}
      </p>
      <h1 id="r-title">Review {review.run_branch ? `of ${review.run_branch}` : ""}</h1>
      <p className="meta" role="status" aria-label="Review status">
        review {review.status} · run {run ? run.status : "?"}
        {merge.merge_status && ` · merge ${merge.merge_status}`}
        {merge.final_commit && ` · ${merge.final_commit.slice(0, 12)} on ${merge.merged_into || merge.final_branch}`}
        {` · turns ${review.turns_used}/${review.max_turns}`}
      </p>
      {review.review_url && (
        <p>
          <a href={review.review_url} target="_blank" rel="noreferrer">
            Open review environment
          </a>
        </p>
      )}
      {(review.warnings || []).map((w) => (
        <p key={w} className="warning">
          {w}
        </p>
      ))}
      <DiffStats diff={review.diff} />
      <Verdict verdict={review.verdict} />
      <Thread thread={review.thread || []} />
      <Actions
        review={review}
        busy={busy}
        act={act}
        result={result}
        rejected={review.status === "pending" ? review.reason : null}
      />
    </section>
  );
}
